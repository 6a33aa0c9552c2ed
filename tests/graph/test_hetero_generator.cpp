// The ogbn-mag-shaped generator (generator.h, heterogeneous): its types, relations and counts, the
// classes every relation follows (measured from the edges: with homophily 0 the same statistics
// fall to chance), determinism, and round trips through OGB's heterogeneous layout and the typed
// NumPy layout that give the same dataset (fingerprint, types and relations).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/generator.h"
#include "test_util.h"

namespace adaqp {
namespace {

using ::testing::ElementsAre;

GeneratorOptions mag(double homophily, uint64_t seed = 3) {
  GeneratorOptions o;
  o.heterogeneous = true;
  o.num_nodes = 4000;
  o.num_classes = 4;
  o.feat_dim = 8;
  o.avg_degree = 6;
  o.homophily = homophily;
  o.seed = seed;
  return o;
}

std::vector<int64_t> edges_per_relation(const Graph& g) {
  std::vector<int64_t> n(g.relations.size(), 0);
  for (int32_t r : g.edge_relation) ++n[r];
  return n;
}

TEST(HeteroGenerator, MakesAnOgbnMagShapedGraph) {
  const Graph g = generate_graph(mag(0.9));
  g.validate("generated");
  EXPECT_THAT(g.node_types, ElementsAre("author", "field_of_study", "institution", "paper"));
  // field 3.09%, institution 0.45%, paper 38.4% of 4000 (rounded), author the rest.
  EXPECT_THAT(g.type_offsets, ElementsAre(0, 2322, 2446, 2464, 4000));
  std::vector<std::string> relations;
  for (const Relation& r : g.relations)
    relations.push_back(g.node_types[r.src_type] + "," + r.name + "," + g.node_types[r.dst_type]);
  EXPECT_THAT(relations, ElementsAre("author,affiliated_with,institution", "author,writes,paper",
                                     "paper,cites,paper", "paper,has_topic,field_of_study"));
  const std::vector<int64_t> n = edges_per_relation(g);
  const int64_t papers = 1536, authors = 2322;
  EXPECT_EQ(n[0], authors);  // one institution each
  EXPECT_LE(n[1], 3 * papers);
  EXPECT_GE(n[1], 3 * papers * 95 / 100);  // repeated authors of one paper are rare
  EXPECT_LE(n[2], 3 * papers);
  EXPECT_GE(n[2], 3 * papers * 90 / 100);
  EXPECT_LE(n[3], 2 * papers);
  EXPECT_GE(n[3], papers);
  // Features, labels and the split on papers only.
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    const bool paper = v >= 2464;
    const float* x = g.features.data() + v * g.feat_dim;
    const bool zero = std::all_of(x, x + g.feat_dim, [](float f) { return f == 0.0f; });
    EXPECT_EQ(zero, !paper) << "node " << v;
    if (!paper) {
      EXPECT_EQ(g.labels[v], 0) << "node " << v;
    }
  }
  EXPECT_EQ(g.train.size() + g.valid.size() + g.test.size(), static_cast<size_t>(papers));
  EXPECT_EQ(g.train.size(), static_cast<size_t>(922));  // 60% of the papers
  for (const auto* split : {&g.train, &g.valid, &g.test}) {
    for (int64_t v : *split) EXPECT_EQ(g.node_type(v), 3);
  }
}

// Per relation into or out of papers: the mean, over the non-paper nodes of its other end, of the
// largest share of one paper class among their papers; and for cites, the share of citations
// within a class.
std::map<std::string, double> class_purity(const Graph& g) {
  std::map<std::string, double> purity;
  int64_t same = 0, cites = 0;
  std::map<std::pair<int32_t, int64_t>, std::vector<int64_t>> classes;  // (relation, node) -> count
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int32_t r = g.edge_relation[e];
      const int64_t u = g.indices[e];
      if (g.relations[r].name == "cites") {
        ++cites;
        same += g.labels[u] == g.labels[v];
      } else if (g.relations[r].name == "writes" || g.relations[r].name == "has_topic") {
        const bool into_paper = g.relations[r].name == "writes";
        const int64_t other = into_paper ? u : v, paper = into_paper ? v : u;
        auto& c = classes[{r, other}];
        c.resize(static_cast<size_t>(g.num_classes), 0);
        ++c[g.labels[paper]];
      }
    }
  }
  purity["cites"] = static_cast<double>(same) / static_cast<double>(cites);
  std::map<int32_t, std::pair<double, int64_t>> sums;
  for (const auto& [key, c] : classes) {
    int64_t total = 0;
    for (int64_t k : c) total += k;
    if (total < 3) continue;
    auto& s = sums[key.first];
    s.first += static_cast<double>(*std::max_element(c.begin(), c.end())) / total;
    ++s.second;
  }
  for (const auto& [r, s] : sums) purity[g.relations[r].name] = s.first / s.second;
  return purity;
}

TEST(HeteroGenerator, EveryRelationFollowsTheClasses) {
  std::map<std::string, double> planted = class_purity(generate_graph(mag(0.9)));
  std::map<std::string, double> none = class_purity(generate_graph(mag(0.0)));
  // Within a class with probability 0.9 + 0.1 / 4; at random 1 / 4.
  EXPECT_NEAR(planted["cites"], 0.925, 0.03);
  EXPECT_NEAR(none["cites"], 0.25, 0.03);
  for (const char* r : {"writes", "has_topic"}) {
    EXPECT_GT(planted[r], 0.85) << r;
    EXPECT_LT(none[r], 0.75) << r;
  }
}

TEST(HeteroGenerator, IsDeterministicAndRoundTripsThroughBothTypedLayouts) {
  const Graph g = generate_graph(mag(0.8));
  EXPECT_EQ(fingerprint(g), fingerprint(generate_graph(mag(0.8))));
  EXPECT_NE(fingerprint(g), fingerprint(generate_graph(mag(0.8, 4))));
  test::TempDir tmp;
  const std::string dir = tmp.str("mag");
  save_ogb_hetero(g, dir);
  const Graph back = load_ogb(dir, "");
  EXPECT_EQ(back.node_types, g.node_types);
  EXPECT_EQ(back.relations, g.relations);
  EXPECT_EQ(fingerprint(back), fingerprint(g));
  save_numpy(g, tmp.str("numpy"));
  const Graph numpy = load_numpy(tmp.str("numpy"));
  EXPECT_EQ(numpy.node_types, g.node_types);
  EXPECT_EQ(numpy.relations, g.relations);
  EXPECT_EQ(fingerprint(numpy), fingerprint(g));
  GeneratorOptions homogeneous = mag(0.8);
  homogeneous.heterogeneous = false;
  EXPECT_EQ(test::error_of<InputError>(
                [&] { save_ogb_hetero(generate_graph(homogeneous), tmp.str("plain")); }),
            tmp.str("plain") + ": synthetic is homogeneous: write it with save_numpy");
}

TEST(HeteroGenerator, RefusesWhatItCannotHonour) {
  GeneratorOptions o = mag(0.8);
  o.heavy_tailed = true;
  EXPECT_THAT(
      test::error_of<ConfigError>([&] { generate_graph(o); }),
      ::testing::StartsWith("dataset.synthetic.heavy_tailed = true: applies to the homogeneous "
                            "generator only"));
  o = mag(0.8);
  o.num_nodes = 10;
  o.avg_degree = 0.5;
  EXPECT_THROW(
      {
        try {
          generate_graph(o);
        } catch (const ConfigError& e) {
          EXPECT_THAT(e.what(), ::testing::HasSubstr("too few for a heterogeneous graph"));
          throw;
        }
      },
      ConfigError);
}

}  // namespace
}  // namespace adaqp
