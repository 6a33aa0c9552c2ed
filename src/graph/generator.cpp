#include "adaqp/graph/generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/rng.h"
#include "hetero_generator.h"
#include "node_draws.h"

namespace adaqp {
namespace {

// Independent random streams of one seed.
enum Stream : uint64_t { kClasses = 1, kPropensity = 2, kEdges = 3, kFeatures = 4, kSplit = 5 };

std::mt19937_64 stream(uint64_t seed, Stream s) {
  return std::mt19937_64(mix_seed(seed * 8 + s));
}

// Rounds of edge sampling before giving up on reaching the requested edge count.
constexpr int kMaxEdgeRounds = 64;

// Walker/Vose alias table: O(1) draws of an index with probability proportional to its weight.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weights)
      : prob_(weights.size()), alias_(weights.size()) {
    const size_t n = weights.size();
    double total = 0;
    for (double w : weights) total += w;
    std::vector<double> scaled(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // Leftovers hold (up to rounding) exactly one share each.
    for (const auto* rest : {&small, &large}) {
      for (uint32_t i : *rest) {
        prob_[i] = 1.0;
        alias_[i] = i;
      }
    }
  }
  uint32_t draw(std::mt19937_64& rng) const {
    const auto i = static_cast<uint32_t>(uniform_below(rng, prob_.size()));
    return uniform01(rng) < prob_[i] ? i : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<uint32_t> alias_;
};

[[noreturn]] void bad_option(const char* field, double value, const std::string& rule) {
  throw ConfigError(fmt::format("dataset.synthetic.{} = {}: {}", field, value, rule));
}

// Expected-degree propensities: all equal, or Pareto with the given exponent (Chung-Lu), capped at
// sqrt(N / avg_degree) times their mean before the cap: a node expects at most about
// sqrt(N * avg_degree) neighbours, more where the cap lowers the mean (1.35 times that with an
// exponent of 2.01).
std::vector<double> propensities(const GeneratorOptions& o) {
  std::vector<double> theta(o.num_nodes, 1.0);
  if (!o.heavy_tailed) return theta;
  std::mt19937_64 rng = stream(o.seed, kPropensity);
  const double inv = -1.0 / (o.power_law_exponent - 1.0);
  double sum = 0;
  for (double& t : theta) {
    t = std::pow(1.0 - uniform01(rng), inv);
    sum += t;
  }
  const double cap = sum / static_cast<double>(o.num_nodes) *
                     std::sqrt(static_cast<double>(o.num_nodes) / o.avg_degree);
  for (double& t : theta) t = std::min(t, cap);
  return theta;
}

// Balanced classes: a random permutation of the nodes dealt round-robin to the classes.
std::vector<int64_t> assign_classes(const GeneratorOptions& o) {
  std::vector<int64_t> order(o.num_nodes);
  for (int64_t v = 0; v < o.num_nodes; ++v) order[v] = v;
  std::mt19937_64 rng = stream(o.seed, kClasses);
  shuffle_portable(order, rng);
  std::vector<int64_t> labels(o.num_nodes);
  for (int64_t i = 0; i < o.num_nodes; ++i) labels[order[i]] = i % o.num_classes;
  return labels;
}

// Undirected edges as sorted unique keys min * N + max. Each candidate picks u by propensity, then
// with probability `homophily` a partner of u's class, otherwise one of another class (both by
// propensity); self-loops are dropped and duplicates merged, and rounds repeat until the count is
// reached.
std::vector<uint64_t> sample_edges(const GeneratorOptions& o, const std::vector<int64_t>& labels,
                                   const std::vector<double>& theta) {
  const auto n = static_cast<uint64_t>(o.num_nodes);
  const auto target =
      static_cast<uint64_t>(std::llround(static_cast<double>(o.num_nodes) * o.avg_degree / 2.0));
  const AliasTable all(theta);
  std::vector<std::vector<uint32_t>> members(o.num_classes);
  for (int64_t v = 0; v < o.num_nodes; ++v) members[labels[v]].push_back(static_cast<uint32_t>(v));
  std::vector<AliasTable> by_class;
  for (const auto& m : members) {
    std::vector<double> w(m.size());
    for (size_t i = 0; i < m.size(); ++i) w[i] = theta[m[i]];
    by_class.emplace_back(w);
  }

  std::mt19937_64 rng = stream(o.seed, kEdges);
  std::vector<uint64_t> keys, batch, merged;
  for (int round = 0; keys.size() < target; ++round) {
    if (round == kMaxEdgeRounds)
      throw ConfigError(fmt::format(
          "dataset.synthetic.avg_degree = {}: could only place {} of {} distinct edges with "
          "num_nodes {}, num_classes {}, homophily {}; lower avg_degree",
          o.avg_degree, keys.size(), target, o.num_nodes, o.num_classes, o.homophily));
    const uint64_t need = target - keys.size();
    batch.clear();
    batch.reserve(need);
    for (uint64_t k = 0; k < need; ++k) {
      const uint32_t u = all.draw(rng);
      const int64_t c = labels[u];
      uint32_t v;
      if (uniform01(rng) < o.homophily) {
        v = members[c][by_class[c].draw(rng)];
      } else {
        v = all.draw(rng);
        for (int tries = 0; labels[v] == c && tries < 64; ++tries) v = all.draw(rng);
        if (labels[v] == c) continue;
      }
      if (u == v) continue;
      batch.push_back(std::min(u, v) * n + std::max(u, v));
    }
    std::sort(batch.begin(), batch.end());
    batch.erase(std::unique(batch.begin(), batch.end()), batch.end());
    merged.clear();
    merged.reserve(keys.size() + batch.size());
    std::set_union(keys.begin(), keys.end(), batch.begin(), batch.end(),
                   std::back_inserter(merged));
    keys.swap(merged);
  }
  return keys;
}

// CSR by destination with both directions of every undirected edge. Keys are sorted by (min, max),
// so appending in key order leaves every row sorted: row x first receives the sources a < x (from
// keys (a, x), in ascending a), then the sources b > x (from keys (x, b), in ascending b).
void build_csr(Graph& g, const std::vector<uint64_t>& keys) {
  const auto n = static_cast<uint64_t>(g.num_nodes);
  g.indptr.assign(g.num_nodes + 1, 0);
  for (uint64_t key : keys) {
    ++g.indptr[key / n + 1];
    ++g.indptr[key % n + 1];
  }
  for (int64_t v = 0; v < g.num_nodes; ++v) g.indptr[v + 1] += g.indptr[v];
  std::vector<int64_t> cursor(g.indptr.begin(), g.indptr.end() - 1);
  g.indices.resize(2 * keys.size());
  for (uint64_t key : keys) {
    const auto a = static_cast<int64_t>(key / n), b = static_cast<int64_t>(key % n);
    g.indices[cursor[b]++] = a;
    g.indices[cursor[a]++] = b;
  }
}

}  // namespace

void validate_generator_options(const GeneratorOptions& o) {
  if (o.num_classes < 2 || o.num_classes > 1 << 20)
    bad_option("num_classes", static_cast<double>(o.num_classes), "must be in [2, 2^20]");
  if (o.num_nodes < 2 * o.num_classes || o.num_nodes >= kMaxNodes)
    bad_option(
        "num_nodes", static_cast<double>(o.num_nodes),
        fmt::format("must be in [2 * num_classes, 2^31) = [{}, {})", 2 * o.num_classes, kMaxNodes));
  if (o.feat_dim < 1 || o.feat_dim > 1 << 20)
    bad_option("feat_dim", static_cast<double>(o.feat_dim), "must be in [1, 2^20]");
  const double max_degree =
      0.25 * static_cast<double>(o.num_nodes) / static_cast<double>(o.num_classes);
  if (!(o.avg_degree > 0 && o.avg_degree <= max_degree))
    bad_option("avg_degree", o.avg_degree,
               fmt::format("must be in (0, num_nodes / (4 * num_classes)] = (0, {}]", max_degree));
  if (!(o.homophily >= 0 && o.homophily <= 1))
    bad_option("homophily", o.homophily, "must be in [0, 1]");
  if (!(o.power_law_exponent > 2 && o.power_law_exponent <= 10))
    bad_option("power_law_exponent", o.power_law_exponent, "must be in (2, 10]");
  if (!o.heavy_tailed && o.power_law_exponent != GeneratorOptions{}.power_law_exponent)
    bad_option("power_law_exponent", o.power_law_exponent,
               "has no effect without heavy_tailed = true (expected degrees are then uniform)");
  if (!(o.feature_signal >= 0 && o.feature_signal <= 1e6))
    bad_option("feature_signal", o.feature_signal, "must be in [0, 1e6]");
  if (!(o.train_fraction > 0 && o.train_fraction <= 1))
    bad_option("train_fraction", o.train_fraction, "must be in (0, 1]");
  if (!(o.valid_fraction >= 0 && o.train_fraction + o.valid_fraction <= 1))
    bad_option("valid_fraction", o.valid_fraction, "must be in [0, 1 - train_fraction]");
  if (o.heterogeneous) validate_hetero_options(o);
}

Graph generate_graph(const GeneratorOptions& opt) {
  validate_generator_options(opt);
  if (opt.heterogeneous) return generate_hetero_graph(opt);
  Graph g;
  g.name = "synthetic";
  g.num_nodes = opt.num_nodes;
  g.num_classes = opt.num_classes;
  g.labels = assign_classes(opt);
  {
    const std::vector<uint64_t> keys = sample_edges(opt, g.labels, propensities(opt));
    build_csr(g, keys);
  }
  std::vector<int64_t> nodes(static_cast<size_t>(opt.num_nodes));
  for (int64_t v = 0; v < opt.num_nodes; ++v) nodes[v] = v;
  g.feat_dim = opt.feat_dim;
  g.features.resize(opt.num_nodes * opt.feat_dim);
  std::mt19937_64 features = stream(opt.seed, kFeatures);
  draw_class_features(g, opt, nodes, features);
  std::mt19937_64 split = stream(opt.seed, kSplit);
  draw_node_split(g, opt, std::move(nodes), split);
  return g;
}

}  // namespace adaqp
