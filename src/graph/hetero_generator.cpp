// The ogbn-mag-shaped heterogeneous graph of generator.h: authors, fields of study, institutions
// and papers in ogbn-mag's proportions, its four relations, features and labels on papers only.
// Every node carries a class (papers: their label; the others a hidden one), and each edge's
// partner is of the node's class with probability `homophily`, else any node of its type (the
// same class by chance too), so that every relation, not only the papers' own features, tells a
// paper's class.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/rng.h"
#include "adaqp/graph/generator.h"
#include "hetero_generator.h"
#include "node_draws.h"

namespace adaqp {
namespace {

// Node types in name order (OGB's), with ogbn-mag's share of its 1,939,743 nodes.
enum Type : int32_t { kAuthor = 0, kField = 1, kInstitution = 2, kPaper = 3 };
constexpr std::array<const char*, 4> kTypeNames = {"author", "field_of_study", "institution",
                                                   "paper"};
constexpr std::array<double, 4> kTypeShare = {0.5806, 0.0309, 0.0045, 0.3840};

// Relations in triplet order (OGB's): per source node of each, how many edges it draws.
struct RelationShape {
  Type src;
  const char* name;
  Type dst;
};
constexpr std::array<RelationShape, 4> kRelations = {{
    {kAuthor, "affiliated_with", kInstitution},
    {kAuthor, "writes", kPaper},
    {kPaper, "cites", kPaper},
    {kPaper, "has_topic", kField},
}};

// Streams of the seed, apart from the homogeneous generator's.
// Scoped and named apart from generator.cpp's, with which a unity build may compile it.
enum class HeteroStream : uint64_t { kClasses = 11, kEdges = 12, kFeatures = 13, kSplit = 14 };

std::mt19937_64 hetero_stream(uint64_t seed, HeteroStream s) {
  return std::mt19937_64(mix_seed(seed * 16 + static_cast<uint64_t>(s)));
}

std::array<int64_t, 4> type_counts(const GeneratorOptions& o) {
  std::array<int64_t, 4> n{};
  int64_t rest = o.num_nodes;
  for (int t = kField; t <= kPaper; ++t) {
    n[t] = std::max<int64_t>(o.num_classes,
                             std::llround(kTypeShare[t] * static_cast<double>(o.num_nodes)));
    rest -= n[t];
  }
  n[kAuthor] = rest;
  return n;
}

}  // namespace

void validate_hetero_options(const GeneratorOptions& o) {
  if (o.heavy_tailed)
    throw ConfigError(
        "dataset.synthetic.heavy_tailed = true: applies to the homogeneous generator only (the "
        "heterogeneous one draws its relations per node)");
  if (type_counts(o)[kAuthor] < o.num_classes)
    throw ConfigError(fmt::format(
        "dataset.synthetic.num_nodes = {}: too few for a heterogeneous graph of {} classes (every "
        "node type needs at least one node per class)",
        o.num_nodes, o.num_classes));
}

Graph generate_hetero_graph(const GeneratorOptions& o) {
  const std::array<int64_t, 4> count = type_counts(o);
  Graph g;
  g.name = "synthetic-mag";
  g.num_nodes = o.num_nodes;
  g.type_offsets = {0};
  for (int t = 0; t < 4; ++t) {
    g.node_types.emplace_back(kTypeNames[t]);
    g.type_offsets.push_back(g.type_offsets.back() + count[t]);
  }
  for (const RelationShape& r : kRelations) g.relations.push_back({r.src, r.name, r.dst});

  // Balanced classes within each type; members[t][c]: the nodes of type t and class c.
  std::mt19937_64 rng = hetero_stream(o.seed, HeteroStream::kClasses);
  std::vector<int64_t> cls(static_cast<size_t>(o.num_nodes));
  std::vector<std::vector<std::vector<int64_t>>> members(4);
  for (int t = 0; t < 4; ++t) {
    std::vector<int64_t> order(static_cast<size_t>(count[t]));
    for (int64_t i = 0; i < count[t]; ++i) order[i] = g.type_offsets[t] + i;
    shuffle_portable(order, rng);
    members[t].resize(static_cast<size_t>(o.num_classes));
    for (int64_t i = 0; i < count[t]; ++i) {
      cls[order[i]] = i % o.num_classes;
      members[t][i % o.num_classes].push_back(order[i]);
    }
  }
  // A partner of type t for a node of class c: of class c with probability homophily.
  std::mt19937_64 erng = hetero_stream(o.seed, HeteroStream::kEdges);
  const auto partner = [&](int t, int64_t c) {
    if (uniform01(erng) < o.homophily) {
      const std::vector<int64_t>& m = members[t][c];
      return m[uniform_below(erng, m.size())];
    }
    return g.type_offsets[t] + static_cast<int64_t>(uniform_below(erng, count[t]));
  };
  // Per source node: one institution per author; cites and has_topic per paper, and per paper
  // its authors (writes, drawn from the paper's side), so that avg_degree sets the papers' edges.
  const auto cites = std::max<int64_t>(1, std::llround(o.avg_degree / 2));
  std::vector<int64_t> src, dst;
  std::vector<int32_t> rel;
  const auto add = [&](int64_t u, int64_t v, int32_t r) {
    src.push_back(u);
    dst.push_back(v);
    rel.push_back(r);
  };
  for (int64_t a = g.type_offsets[kAuthor]; a < g.type_offsets[kAuthor + 1]; ++a)
    add(a, partner(kInstitution, cls[a]), 0);
  for (int64_t p = g.type_offsets[kPaper]; p < g.type_offsets[kPaper + 1]; ++p) {
    for (int k = 0; k < 3; ++k) add(partner(kAuthor, cls[p]), p, 1);
    for (int64_t k = 0; k < cites; ++k) {
      const int64_t q = partner(kPaper, cls[p]);
      if (q != p) add(p, q, 2);
    }
    for (int k = 0; k < 2; ++k) add(p, partner(kField, cls[p]), 3);
  }
  // Repeated (source, target) pairs of one relation are dropped.
  std::vector<std::tuple<int64_t, int64_t, int32_t>> edges;
  for (size_t i = 0; i < src.size(); ++i) edges.emplace_back(dst[i], src[i], rel[i]);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  src.clear();
  dst.clear();
  rel.clear();
  for (const auto& [v, u, r] : edges) add(u, v, r);
  Graph built = Graph::from_edges(g.num_nodes, src, dst, rel);
  g.indptr = std::move(built.indptr);
  g.indices = std::move(built.indices);
  g.edge_relation = std::move(built.edge_relation);

  // Papers: labels, features and the split; the other types have zero rows, class 0 and no split.
  g.num_classes = o.num_classes;
  g.labels.assign(static_cast<size_t>(o.num_nodes), 0);
  std::vector<int64_t> papers;
  for (int64_t p = g.type_offsets[kPaper]; p < g.type_offsets[kPaper + 1]; ++p) {
    g.labels[p] = cls[p];
    papers.push_back(p);
  }
  g.feat_dim = o.feat_dim;
  g.features.assign(static_cast<size_t>(o.num_nodes * o.feat_dim), 0.0f);
  std::mt19937_64 frng = hetero_stream(o.seed, HeteroStream::kFeatures);
  draw_class_features(g, o, papers, frng);
  std::mt19937_64 srng = hetero_stream(o.seed, HeteroStream::kSplit);
  draw_node_split(g, o, std::move(papers), srng);
  return g;
}

}  // namespace adaqp
