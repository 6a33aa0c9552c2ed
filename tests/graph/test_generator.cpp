#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/generator.h"

namespace adaqp {
namespace {

GeneratorOptions small_options() {
  GeneratorOptions o;
  o.num_nodes = 4000;
  o.num_classes = 5;
  o.feat_dim = 16;
  o.avg_degree = 10;
  o.homophily = 0.8;
  o.seed = 7;
  return o;
}

int64_t max_degree(const Graph& g) {
  int64_t m = 0;
  for (int64_t v = 0; v < g.num_nodes; ++v) m = std::max(m, g.in_degree(v));
  return m;
}

bool has_edge(const Graph& g, int64_t src, int64_t dst) {
  return std::binary_search(g.indices.begin() + g.indptr[dst],
                            g.indices.begin() + g.indptr[dst + 1], src);
}

// FNV-1a over a sequence of integers: a compact golden value.
uint64_t fnv(uint64_t h, const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    for (int b = 0; b < 8; ++b) {
      h ^= static_cast<uint64_t>(x >> (8 * b)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

TEST(Generator, IsDeterministicForASeed) {
  const Graph a = generate_graph(small_options());
  const Graph b = generate_graph(small_options());
  EXPECT_EQ(a.indptr, b.indptr);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.valid, b.valid);
  EXPECT_EQ(a.test, b.test);
  GeneratorOptions other = small_options();
  other.seed = 8;
  EXPECT_NE(generate_graph(other).indices, a.indices);
}

// The integer output of a small graph is pinned: a change to the sampling (or a standard library
// whose arithmetic differs) shows up here.
TEST(Generator, GoldenStructureOfASmallGraph) {
  GeneratorOptions o;
  o.num_nodes = 60;
  o.num_classes = 3;
  o.feat_dim = 2;
  o.avg_degree = 4;
  o.seed = 1;
  const Graph g = generate_graph(o);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto* v : {&g.indptr, &g.indices, &g.labels, &g.train, &g.valid, &g.test})
    h = fnv(h, *v);
  EXPECT_EQ(h, 11787583494174780011u) << "golden hash; g.num_edges() = " << g.num_edges();
}

TEST(Generator, SymmetricWithoutSelfLoopsOrDuplicates) {
  const Graph g = generate_graph(small_options());
  EXPECT_EQ(g.num_edges(), 2 * 20000);  // round(4000 * 10 / 2) undirected edges
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      ASSERT_NE(u, v) << "self-loop at " << v;
      if (e > g.indptr[v]) {
        ASSERT_LT(g.indices[e - 1], u) << "row " << v << " unsorted/duplicate";
      }
      ASSERT_TRUE(has_edge(g, v, u)) << "edge " << u << "->" << v << " has no reverse";
    }
  }
}

TEST(Generator, HomophilyAndDegreeMatchTheOptions) {
  for (double h : {0.2, 0.8}) {
    GeneratorOptions o = small_options();
    o.homophily = h;
    const Graph g = generate_graph(o);
    int64_t same = 0;
    for (int64_t v = 0; v < g.num_nodes; ++v)
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
        same += g.labels[g.indices[e]] == g.labels[v];
    const double measured = static_cast<double>(same) / static_cast<double>(g.num_edges());
    std::cout << "homophily requested " << h << ", measured " << measured << "\n";
    EXPECT_NEAR(measured, h, 0.02);
    EXPECT_DOUBLE_EQ(static_cast<double>(g.num_edges()) / static_cast<double>(g.num_nodes), 10.0);
  }
}

TEST(Generator, HeavyTailedDegreesReachFarHigher) {
  GeneratorOptions o = small_options();
  const int64_t uniform_max = max_degree(generate_graph(o));
  o.heavy_tailed = true;
  const Graph heavy = generate_graph(o);
  const int64_t heavy_max = max_degree(heavy);
  std::cout << "max degree uniform " << uniform_max << ", heavy-tailed " << heavy_max << "\n";
  EXPECT_LE(uniform_max, 30);
  EXPECT_GE(heavy_max, 5 * uniform_max);
  EXPECT_EQ(heavy.num_edges(), 2 * 20000);
}

TEST(Generator, BalancedClassesAndSplitByFractions) {
  const Graph g = generate_graph(small_options());
  std::vector<int64_t> per_class(5, 0);
  for (int64_t l : g.labels) ++per_class[l];
  for (int64_t c : per_class) EXPECT_EQ(c, 800);
  EXPECT_EQ(g.train.size(), 2400u);
  EXPECT_EQ(g.valid.size(), 800u);
  EXPECT_EQ(g.test.size(), 800u);
  std::vector<int64_t> all;
  for (const auto* s : {&g.train, &g.valid, &g.test}) {
    EXPECT_TRUE(std::is_sorted(s->begin(), s->end()));
    all.insert(all.end(), s->begin(), s->end());
  }
  std::sort(all.begin(), all.end());
  for (int64_t i = 0; i < g.num_nodes; ++i) ASSERT_EQ(all[i], i);
}

// Nearest-centroid accuracy on the test nodes, with centroids from the training nodes, of the
// given per-node vectors.
double centroid_accuracy(const Graph& g, const std::vector<double>& x) {
  const int64_t d = g.feat_dim;
  std::vector<double> centroid(g.num_classes * d, 0.0);
  std::vector<int64_t> count(g.num_classes, 0);
  for (int64_t v : g.train) {
    ++count[g.labels[v]];
    for (int64_t j = 0; j < d; ++j) centroid[g.labels[v] * d + j] += x[v * d + j];
  }
  for (int64_t c = 0; c < g.num_classes; ++c)
    for (int64_t j = 0; j < d; ++j) centroid[c * d + j] /= static_cast<double>(count[c]);
  int64_t correct = 0;
  for (int64_t v : g.test) {
    int64_t best = 0;
    double best_dist = INFINITY;
    for (int64_t c = 0; c < g.num_classes; ++c) {
      double dist = 0;
      for (int64_t j = 0; j < d; ++j) dist += std::pow(x[v * d + j] - centroid[c * d + j], 2);
      if (dist < best_dist) best_dist = dist, best = c;
    }
    correct += best == g.labels[v];
  }
  return static_cast<double>(correct) / static_cast<double>(g.test.size());
}

// The point of the generator: features alone classify poorly, neighbourhood averages well.
TEST(Generator, NeighbourhoodAveragingBeatsFeaturesAlone) {
  const Graph g = generate_graph(small_options());
  const int64_t d = g.feat_dim;
  std::vector<double> raw(g.features.begin(), g.features.end()), smooth(raw.size());
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t j = 0; j < d; ++j) smooth[v * d + j] = raw[v * d + j];
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
      for (int64_t j = 0; j < d; ++j) smooth[v * d + j] += raw[g.indices[e] * d + j];
  }
  const double acc_raw = centroid_accuracy(g, raw), acc_smooth = centroid_accuracy(g, smooth);
  std::cout << "nearest-centroid accuracy: features " << acc_raw << ", 1-hop sums " << acc_smooth
            << "\n";
  EXPECT_LT(acc_raw, 0.75);
  EXPECT_GT(acc_smooth, acc_raw + 0.15);
}

TEST(Generator, FeatureSignalSetsTheClassMeanNorm) {
  GeneratorOptions o = small_options();
  o.feature_signal = 4.0;
  const Graph g = generate_graph(o);
  const int64_t d = g.feat_dim;
  std::vector<double> mean(g.num_classes * d, 0.0);
  for (int64_t v = 0; v < g.num_nodes; ++v)
    for (int64_t j = 0; j < d; ++j) mean[g.labels[v] * d + j] += g.features[v * d + j] / 800.0;
  for (int64_t c = 0; c < g.num_classes; ++c) {
    double norm2 = 0;
    for (int64_t j = 0; j < d; ++j) norm2 += mean[c * d + j] * mean[c * d + j];
    // The mean of 800 unit-noise rows adds about sqrt(16 / 800) = 0.14 of norm.
    EXPECT_NEAR(std::sqrt(norm2), 4.0, 0.3) << "class " << c;
  }
}

// Checks that invalid value `bad` for a field gives a ConfigError naming the field.
template <typename T>
void expect_rejected(T GeneratorOptions::*field, T bad, const std::string& name) {
  GeneratorOptions o = small_options();
  o.*field = bad;
  try {
    generate_graph(o);
    ADD_FAILURE() << name << " = " << bad << " was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dataset.synthetic." + name), std::string::npos)
        << e.what();
  }
}

TEST(Generator, InvalidOptionsNameTheField) {
  expect_rejected<int64_t>(&GeneratorOptions::num_nodes, 9, "num_nodes");
  expect_rejected<int64_t>(&GeneratorOptions::num_classes, 1, "num_classes");
  expect_rejected<int64_t>(&GeneratorOptions::feat_dim, 0, "feat_dim");
  expect_rejected(&GeneratorOptions::avg_degree, 0.0, "avg_degree");
  expect_rejected(&GeneratorOptions::avg_degree, 500.0, "avg_degree");
  expect_rejected(&GeneratorOptions::avg_degree, std::nan(""), "avg_degree");
  expect_rejected(&GeneratorOptions::homophily, 1.5, "homophily");
  expect_rejected(&GeneratorOptions::power_law_exponent, 2.0, "power_law_exponent");
  expect_rejected(&GeneratorOptions::feature_signal, -1.0, "feature_signal");
  expect_rejected(&GeneratorOptions::train_fraction, 0.0, "train_fraction");
  expect_rejected(&GeneratorOptions::valid_fraction, 0.5, "valid_fraction");
}

}  // namespace
}  // namespace adaqp
