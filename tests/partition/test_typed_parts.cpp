// Parts of a heterogeneous graph (part.h, partition_dir.h): every in-edge keeps its relation and
// every owned and halo node its type, so that the parts of W = 1..4 together hold exactly the
// graph's typed edges (checked against the graph, edge by edge); the partition directory writes
// and reads them back with the names of the types and relations, and refuses a meta.yaml whose
// relation names an unknown type; the per-relation boundary covers (R-GCN's partial sums serve one
// row and relation) cover every typed cut edge and cost what a hand count says; METIS with
// partition.balance_types balances every type's nodes across the parts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/boundary_cover.h"
#include "adaqp/partition/part.h"
#include "adaqp/partition/partition_dir.h"
#include "dataset_files.h"
#include "test_util.h"
#include "typed_graph.h"

namespace adaqp {
namespace {

using Edge = std::tuple<int64_t, int64_t, int32_t>;  // source, destination, relation

// The tiny ogbn-mag-shaped graph with reverse relations and per-type self-loops: 27 typed edges
// over 8 relations.
Graph typed_graph(const test::TempDir& tmp) {
  const std::string dir = tmp.str("tiny-mag");
  test::write_ogb(dir, test::tiny_hetero_text());
  DatasetSpec spec;
  spec.path = dir;
  spec.transform.add_reverse = true;
  spec.transform.self_loops = true;
  return load_dataset(spec);
}

std::vector<Edge> graph_edges(const Graph& g) {
  std::vector<Edge> edges;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
      edges.emplace_back(g.indices[e], v, g.edge_relation[e]);
  }
  std::sort(edges.begin(), edges.end());
  return edges;
}

// The typed edges a part holds, in global ids; its nodes' types checked against the graph.
void add_part_edges(const Graph& g, const Part& p, std::vector<Edge>& edges) {
  ASSERT_TRUE(p.heterogeneous());
  ASSERT_EQ(p.local_relations.size(), p.local_indices.size());
  ASSERT_EQ(p.halo_relations.size(), p.halo_indices.size());
  for (int64_t i = 0; i < p.num_owned(); ++i) {
    EXPECT_EQ(p.owned_type[i], g.node_type(p.owned_gid[i])) << "owned " << i;
    for (int64_t e = p.local_indptr[i]; e < p.local_indptr[i + 1]; ++e)
      edges.emplace_back(p.owned_gid[p.local_indices[e]], p.owned_gid[i], p.local_relations[e]);
    for (int64_t e = p.halo_indptr[i]; e < p.halo_indptr[i + 1]; ++e)
      edges.emplace_back(p.halo_gid[p.halo_indices[e]], p.owned_gid[i], p.halo_relations[e]);
  }
  for (int64_t h = 0; h < p.num_halo(); ++h) {
    EXPECT_EQ(p.halo_type[h], g.node_type(p.halo_gid[h])) << "halo " << h;
  }
}

TEST(TypedParts, ThePartsHoldExactlyTheGraphsTypedEdges) {
  test::TempDir tmp;
  const Graph g = typed_graph(tmp);
  ASSERT_EQ(g.num_edges(), 27);
  std::mt19937 rng(5);
  for (int world = 1; world <= 4; ++world) {
    std::vector<int32_t> owner(static_cast<size_t>(g.num_nodes));
    for (int64_t v = 0; v < g.num_nodes; ++v)
      owner[v] = static_cast<int32_t>(v < world ? v : rng() % world);
    std::vector<Edge> edges;
    for (int r = 0; r < world; ++r) add_part_edges(g, build_part(g, owner, r), edges);
    std::sort(edges.begin(), edges.end());
    EXPECT_EQ(edges, graph_edges(g)) << "W = " << world;
  }
}

TEST(TypedParts, ThePartitionDirectoryKeepsTypesAndRelations) {
  test::TempDir tmp;
  const Graph g = typed_graph(tmp);
  PartitionOptions opt;
  opt.method = PartitionMethod::kRandom;
  opt.parts = 2;
  opt.seed = 3;
  const std::string dir = tmp.str("parts");
  write_partition(dir, g, opt);
  const PartitionMeta meta = read_partition_meta(dir);
  EXPECT_EQ(meta.node_types, g.node_types);
  EXPECT_EQ(meta.relations, g.relations);
  const std::vector<int32_t> owner = assign_parts(g, opt);
  for (int r = 0; r < 2; ++r) {
    const Part read = load_part(dir, r, 2);
    const Part built = build_part(g, owner, r);
    EXPECT_EQ(read.local_relations, built.local_relations);
    EXPECT_EQ(read.halo_relations, built.halo_relations);
    EXPECT_EQ(read.owned_type, built.owned_type);
    EXPECT_EQ(read.halo_type, built.halo_type);
  }

  // A relation naming a type meta.yaml does not list.
  std::ifstream in(dir + "/meta.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("[author, writes, paper]");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 23, "[author, writes, venue]");
  std::ofstream(dir + "/meta.yaml") << text;
  try {
    read_partition_meta(dir);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("meta.yaml: relations[0]: names node type 'venue', which "
                                     "node_types does not list"));
  }
}

// Three sources of part 0 into one row of part 1: over three relations, a partial sum per relation
// is needed (or the three source rows), over one relation one partial sum carries all three.
TEST(TypedParts, RelationCoversKeepEachRelationsPartialSumsApart) {
  for (const bool one_relation : {false, true}) {
    const std::vector<int32_t> rel =
        one_relation ? std::vector<int32_t>{0, 0, 0} : std::vector<int32_t>{0, 1, 2};
    const Graph g = test::typed_edges_graph("fan-in", {"a", "b"}, {0, 3, 4},
                                            {{0, "r0", 1}, {0, "r1", 1}, {0, "r2", 1}}, {0, 1, 2},
                                            {3, 3, 3}, rel, {3});
    const Part p = build_part(g, {0, 0, 0, 1}, 1);
    const std::vector<PairCover> covers = boundary_covers(p);
    ASSERT_EQ(covers.size(), 1u);
    EXPECT_EQ(covers[0].source_rows, 3);
    EXPECT_EQ(covers[0].cover_rows(), 1);
    EXPECT_EQ(covers[0].relation_cover_rows(), one_relation ? 1 : 3) << one_relation;
  }
}

TEST(TypedParts, RelationCoversCoverEveryTypedCutEdge) {
  test::TempDir tmp;
  const Graph g = typed_graph(tmp);
  std::mt19937 rng(9);
  for (int world = 2; world <= 4; ++world) {
    std::vector<int32_t> owner(static_cast<size_t>(g.num_nodes));
    for (int64_t v = 0; v < g.num_nodes; ++v) owner[v] = static_cast<int32_t>(rng() % world);
    for (int r = 0; r < world; ++r) {
      const Part p = build_part(g, owner, r);
      for (int s = 0; s < world; ++s) {
        if (s == r || p.halo_count_from(s) == 0) continue;
        const Bipartite b = relation_boundary_graph(p, s);
        // Right vertices: the distinct (row, relation) pairs with an in-edge from s's block.
        std::vector<std::pair<int64_t, int32_t>> pairs;
        int64_t edges = 0;
        for (int64_t i = 0; i < p.num_owned(); ++i) {
          for (int64_t e = p.halo_indptr[i]; e < p.halo_indptr[i + 1]; ++e) {
            if (p.halo_indices[e] < p.halo_offsets[s] || p.halo_indices[e] >= p.halo_offsets[s + 1])
              continue;
            pairs.emplace_back(i, p.halo_relations[e]);
            ++edges;
          }
        }
        std::sort(pairs.begin(), pairs.end());
        pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
        EXPECT_EQ(b.num_right, static_cast<int64_t>(pairs.size()));
        EXPECT_EQ(static_cast<int64_t>(b.right.size()), edges);
        const VertexCover c = minimum_vertex_cover(b);
        for (int64_t u = 0; u < b.num_left(); ++u) {
          for (int64_t k = b.offsets[u]; k < b.offsets[u + 1]; ++k)
            EXPECT_TRUE(c.left[u] || c.right[b.right[k]]) << "edge " << u << " -> " << b.right[k];
        }
        const Bipartite plain = boundary_graph(p, s, nullptr);
        EXPECT_GE(c.size(), minimum_vertex_cover(plain).size());
        EXPECT_LE(c.size(), plain.num_left());
        // The relation-first graph: left the distinct (source, relation), right the destinations,
        // an edge per distinct (source, relation, destination); its cover at most the destinations.
        std::vector<SourceRelation> sources;
        std::vector<int64_t> destinations;
        const Bipartite f = relation_first_graph(p, s, &sources, &destinations);
        std::vector<std::tuple<int64_t, int32_t, int64_t>> triples;
        for (int64_t i = 0; i < p.num_owned(); ++i) {
          for (int64_t e = p.halo_indptr[i]; e < p.halo_indptr[i + 1]; ++e) {
            const int64_t u = p.halo_indices[e] - p.halo_offsets[s];
            if (u >= 0 && u < p.halo_count_from(s)) triples.emplace_back(u, p.halo_relations[e], i);
          }
        }
        std::sort(triples.begin(), triples.end());
        triples.erase(std::unique(triples.begin(), triples.end()), triples.end());
        std::vector<std::tuple<int64_t, int32_t, int64_t>> got;
        ASSERT_EQ(f.num_left(), static_cast<int64_t>(sources.size()));
        ASSERT_EQ(f.num_right, static_cast<int64_t>(destinations.size()));
        for (int64_t u = 0; u < f.num_left(); ++u) {
          for (int64_t k = f.offsets[u]; k < f.offsets[u + 1]; ++k)
            got.emplace_back(sources[u].source, sources[u].relation, destinations[f.right[k]]);
        }
        std::sort(got.begin(), got.end());
        EXPECT_EQ(got, triples);
        const VertexCover fc = minimum_vertex_cover(f);
        for (int64_t u = 0; u < f.num_left(); ++u) {
          for (int64_t k = f.offsets[u]; k < f.offsets[u + 1]; ++k)
            EXPECT_TRUE(fc.left[u] || fc.right[f.right[k]]) << "edge " << u << " -> " << f.right[k];
        }
        EXPECT_LE(fc.size(), f.num_right);
        for (const PairCover& pc : boundary_covers(p)) {
          if (pc.sender != s) continue;
          EXPECT_EQ(pc.destinations, f.num_right);
          EXPECT_EQ(pc.first_cover_rows(), fc.size());
        }
      }
    }
  }
}

// Two types of 600 nodes, each a community of its own (a ring and random chords within the type)
// and 20 edges between them: a minimum cut with balanced node counts puts each type on its own
// part; with partition.balance_types each part holds about half of each type.
TEST(TypedParts, BalanceTypesGivesEveryPartItsShareOfEachType) {
  constexpr int64_t kPerType = 600;
  std::vector<int64_t> src, dst;
  std::vector<int32_t> rel;
  std::mt19937_64 rng(7);
  for (int32_t t = 0; t < 2; ++t) {
    const int64_t base = t * kPerType;
    for (int64_t i = 0; i < kPerType; ++i) {
      for (const int64_t j : {(i + 1) % kPerType, static_cast<int64_t>(rng() % kPerType)}) {
        src.push_back(base + i);
        dst.push_back(base + j);
        rel.push_back(t);
      }
    }
  }
  for (int64_t k = 0; k < 20; ++k) {
    src.push_back(static_cast<int64_t>(rng() % kPerType));
    dst.push_back(kPerType + static_cast<int64_t>(rng() % kPerType));
    rel.push_back(2);
  }
  const Graph g =
      test::typed_edges_graph("two communities", {"a", "b"}, {0, kPerType, 2 * kPerType},
                              {{0, "aa", 0}, {1, "bb", 1}, {0, "ab", 1}}, src, dst, rel, {});
  PartitionOptions opt;
  opt.parts = 2;
  // per_part[p][t]: type t's nodes on part p.
  const auto per_part = [&](const std::vector<int32_t>& owner) {
    std::vector<std::vector<int64_t>> n(2, std::vector<int64_t>(2, 0));
    for (int64_t v = 0; v < g.num_nodes; ++v) ++n[owner[v]][g.node_type(v)];
    return n;
  };
  const auto unbalanced = per_part(assign_parts(g, opt));
  EXPECT_GT(std::max(unbalanced[0][0], unbalanced[1][0]), kPerType * 9 / 10)
      << "without the constraint one part holds (nearly) all of type a";
  opt.balance_types = true;
  const auto balanced = per_part(assign_parts(g, opt));
  for (int p = 0; p < 2; ++p) {
    for (int t = 0; t < 2; ++t) {
      EXPECT_LE(balanced[p][t], kPerType / 2 * 11 / 10) << "part " << p << ", type " << t;
    }
  }
  Graph untyped = Graph::from_edges(4, {0, 1, 2, 3}, {1, 2, 3, 0});
  untyped.name = "ring";
  EXPECT_THAT(test::error_of<ConfigError>([&] { assign_parts(untyped, opt); }),
              ::testing::HasSubstr("partition.balance_types = true: the dataset 'ring' has no "
                                   "node types"));
}

}  // namespace
}  // namespace adaqp
