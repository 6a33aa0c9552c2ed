// The relation-first layout's start-up exchange (exchange/relation_first_layout.h) on ranks as
// threads: what each end agrees on for hand-made typed multigraphs (a duplicate edge, two
// relations into one destination, a local edge that only adds to a degree, a source whose
// transformed row serves three destinations), also with the nodes of rank 1 on rank 2 and rank 1
// owning no node (no type arrays, and still the graph's relations).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/exchange/relation_first_layout.h"
#include "adaqp/graph/graph.h"
#include "adaqp/partition/boundary_cover.h"
#include "adaqp/partition/part.h"
#include "typed_graph.h"

namespace adaqp {
namespace {

// Nodes 0, 1 (type a) on rank 0, nodes 2, 3 (type b) on rank 1. Relation r0 (a -> b): 0 -> 2
// twice, 1 -> 2; r1 (a -> b): 1 -> 2, 0 -> 3; r2 (b -> b): 3 -> 2, local to rank 1.
Graph typed_multigraph() {
  return test::typed_edges_graph("typed multigraph", {"a", "b"}, {0, 2, 4},
                                 {{0, "r0", 1}, {0, "r1", 1}, {1, "r2", 1}}, {0, 0, 1, 1, 0, 3},
                                 {2, 2, 2, 2, 3, 2}, {0, 0, 0, 1, 1, 2}, {2, 3});
}

// The receiver's cut edges from rank 0: (0, r0) -> 2, (1, r0) -> 2, (1, r1) -> 2, (0, r1) -> 3.
// A minimum cover has two rows; König's from the (source, relation) side is the transformed row
// h_0 W_r1 (into 3) and destination 2's partial sum.
TEST(RelationFirstLayout, AMinimumCoverOfTransformedSourcesAndPartialSums) {
  const Graph g = typed_multigraph();
  for (const int world : {2, 3}) {
    const int receiver = world - 1;
    const std::vector<int32_t> owner = {0, 0, receiver, receiver};
    // N * (1 + world) + gid * relations + relation, and N * (1 + sender) + gid.
    const int64_t source_key = 4 * (1 + world) + 0 * 3 + 1, partial_key = 4 * 1 + 2;
    run_thread_ranks(world, [&](Communicator& comm) {
      const Part part = build_part(g, owner, comm.rank());
      const RelationFirstLayout layout = relation_first_layout(part, comm);
      const Boundary& b = layout.boundary;
      if (comm.rank() != 0 && comm.rank() != receiver) {
        EXPECT_EQ(part.num_owned(), 0);
        EXPECT_EQ(b.sends() + b.recvs(), 0);
      } else if (comm.rank() == 0) {
        EXPECT_EQ(b.recvs(), 0);
        ASSERT_EQ(b.send_count_to(receiver), 2);
        EXPECT_EQ(b.send_keys, (std::vector<int64_t>{source_key, partial_key}));
        EXPECT_EQ(layout.pair_row, (std::vector<int64_t>{0, 1, 1}));
        EXPECT_EQ(layout.pair_relation, (std::vector<int32_t>{1, 0, 1}));
        // The transformed row: divisor 1. Destination 2: deg_r0(2) = 3 (the duplicate twice),
        // deg_r1(2) = 1; r2's edge adds to none.
        EXPECT_EQ(layout.pair_degree, (std::vector<int64_t>{1, 3, 1}));
        ASSERT_EQ(layout.pair_indptr, (std::vector<int64_t>{0, 1, 4, 5}));
        std::vector<int64_t> sources;
        for (const int32_t j : layout.pair_sources) sources.push_back(part.owned_gid[j]);
        EXPECT_EQ(sources, (std::vector<int64_t>{0, 0, 0, 1, 1}));
      } else {
        EXPECT_EQ(b.sends(), 0);
        EXPECT_EQ(layout.num_pairs(), 0);
        ASSERT_EQ(b.recv_count_from(0), 2);
        EXPECT_EQ(b.recvs(), 2);
        EXPECT_EQ(b.recv_keys, (std::vector<int64_t>{source_key, partial_key}));
        // Received row 0 adds into node 3 with 1 / deg_r1(3) = 1, row 1 into node 2 with 1.
        std::vector<int64_t> destination(2, -1);
        for (int64_t i = 0; i < part.num_owned(); ++i) {
          for (int64_t k = layout.halo_indptr[i]; k < layout.halo_indptr[i + 1]; ++k) {
            destination[layout.halo_indices[k]] = part.owned_gid[i];
            EXPECT_EQ(layout.halo_values[k], 1.0F);
          }
        }
        EXPECT_EQ(destination, (std::vector<int64_t>{3, 2}));
        EXPECT_EQ(layout.halo_indptr.back(), 2);
        // The bipartite graph behind the cover: the duplicate edge 0 -> 2 (r0) is one edge.
        std::vector<SourceRelation> sources;
        const Bipartite g = relation_first_graph(part, 0, &sources, nullptr);
        EXPECT_EQ(g.num_left(), 4);
        EXPECT_EQ(g.num_right, 2);
        EXPECT_EQ(g.right.size(), 4u);
      }
    });
  }
}

// Node 0 (type a) on rank 0; node 1 (a) and nodes 2-4 (b) on rank 1. Relation r1 (a -> b):
// 0 -> 2, 0 -> 3, 0 -> 4 twice, and 1 -> 4 local; r0 (a -> b) unused. One transformed row h_0 W_r1
// serves the three destinations: into 2 and 3 with 1 / deg_r1 = 1, into 4 with 2 / 3.
TEST(RelationFirstLayout, ATransformedSourceRowAddsIntoEachDestinationByItsDegree) {
  const Graph g =
      test::typed_edges_graph("fan-out", {"a", "b"}, {0, 2, 5}, {{0, "r0", 1}, {0, "r1", 1}},
                              {0, 0, 0, 0, 1}, {2, 3, 4, 4, 4}, {1, 1, 1, 1, 1}, {2});
  const std::vector<int32_t> owner = {0, 1, 1, 1, 1};
  run_thread_ranks(2, [&](Communicator& comm) {
    const Part part = build_part(g, owner, comm.rank());
    const RelationFirstLayout layout = relation_first_layout(part, comm);
    const Boundary& b = layout.boundary;
    const int64_t key = 5 * (1 + 2) + 0 * 2 + 1;
    if (comm.rank() == 0) {
      EXPECT_EQ(b.send_keys, (std::vector<int64_t>{key}));
      EXPECT_EQ(layout.pair_relation, (std::vector<int32_t>{1}));
      EXPECT_EQ(layout.pair_degree, (std::vector<int64_t>{1}));
      ASSERT_EQ(layout.pair_sources.size(), 1u);
      EXPECT_EQ(part.owned_gid[layout.pair_sources[0]], 0);
      return;
    }
    EXPECT_EQ(b.recv_keys, (std::vector<int64_t>{key}));
    std::vector<std::pair<int64_t, float>> into;
    for (int64_t i = 0; i < part.num_owned(); ++i) {
      for (int64_t k = layout.halo_indptr[i]; k < layout.halo_indptr[i + 1]; ++k) {
        EXPECT_EQ(layout.halo_indices[k], 0);
        into.emplace_back(part.owned_gid[i], layout.halo_values[k]);
      }
    }
    std::sort(into.begin(), into.end());
    ASSERT_EQ(into.size(), 3u);
    EXPECT_EQ(into[0], std::make_pair(int64_t{2}, 1.0F));
    EXPECT_EQ(into[1], std::make_pair(int64_t{3}, 1.0F));
    EXPECT_EQ(into[2].first, 4);
    EXPECT_FLOAT_EQ(into[2].second, 2.0F / 3.0F);
  });
}

}  // namespace
}  // namespace adaqp
