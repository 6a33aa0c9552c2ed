// Parts of a heterogeneous graph (part.h, partition_dir.h): every in-edge keeps its relation and
// every owned and halo node its type, so that the parts of W = 1..4 together hold exactly the
// graph's typed edges (checked against the graph, edge by edge); the partition directory writes
// and reads them back with the names of the types and relations, and refuses a meta.yaml whose
// relation names an unknown type.
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
#include "adaqp/partition/part.h"
#include "adaqp/partition/partition_dir.h"
#include "dataset_files.h"
#include "test_util.h"

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
    const Part read = load_part(dir, r, 2, fingerprint(g));
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

}  // namespace
}  // namespace adaqp
