// The relation-first layout's start-up exchange (exchange/relation_first_layout.h) on ranks as
// threads: what each end agrees on for a hand-made typed multigraph (a duplicate edge, two
// relations into one destination, a local edge that only adds to a degree), also with the nodes of
// rank 1 on rank 2 and rank 1 owning no node (no type arrays, and still the graph's relations).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/exchange/relation_first_layout.h"
#include "adaqp/graph/graph.h"
#include "adaqp/partition/part.h"

namespace adaqp {
namespace {

// Nodes 0, 1 (type a) on rank 0, nodes 2, 3 (type b) on rank 1. Relation r0 (a -> b): 0 -> 2
// twice, 1 -> 2; r1 (a -> b): 1 -> 2, 0 -> 3; r2 (b -> b): 3 -> 2, local to rank 1.
Graph typed_multigraph() {
  Graph g;
  g.name = "typed multigraph";
  g.node_types = {"a", "b"};
  g.type_offsets = {0, 2, 4};
  g.relations = {{0, "r0", 1}, {0, "r1", 1}, {1, "r2", 1}};
  const Graph built =
      Graph::from_edges(4, {0, 0, 1, 1, 0, 3}, {2, 2, 2, 2, 3, 2}, {0, 0, 0, 1, 1, 2});
  g.num_nodes = 4;
  g.indptr = built.indptr;
  g.indices = built.indices;
  g.edge_relation = built.edge_relation;
  g.feat_dim = 1;
  g.features.assign(4, 0.0f);
  g.num_classes = 2;
  g.labels.assign(4, 0);
  g.train = {2, 3};
  g.validate("typed multigraph");
  return g;
}

TEST(RelationFirstLayout, EachDestinationIsOneRowOfItsPairsWithTheirDegreesAndEdges) {
  const Graph g = typed_multigraph();
  for (const int world : {2, 3}) {
    const int receiver = world - 1;
    const std::vector<int32_t> owner = {0, 0, receiver, receiver};
    run_thread_ranks(world, [&](Communicator& comm) {
      const Part part = build_part(g, owner, comm.rank());
      const RelationFirstLayout layout = relation_first_layout(part, comm);
      const Boundary& b = layout.boundary;
      if (comm.rank() != 0 && comm.rank() != receiver) {
        EXPECT_EQ(part.num_owned(), 0);
        EXPECT_EQ(b.sends() + b.recvs(), 0);
      } else if (comm.rank() == 0) {
        EXPECT_EQ(b.recvs(), 0);
        ASSERT_EQ(b.send_count_to(receiver), 2);                       // destinations 2 and 3
        EXPECT_EQ(b.send_keys, (std::vector<int64_t>{4 + 2, 4 + 3}));  // N * (1 + sender) + gid
        EXPECT_EQ(layout.pair_row, (std::vector<int64_t>{0, 0, 1}));
        EXPECT_EQ(layout.pair_relation, (std::vector<int32_t>{0, 1, 1}));
        // deg_r0(2) = 3 (the duplicate twice), deg_r1(2) = 1, deg_r1(3) = 1; r2's edge adds to
        // none.
        EXPECT_EQ(layout.pair_degree, (std::vector<int64_t>{3, 1, 1}));
        ASSERT_EQ(layout.pair_indptr, (std::vector<int64_t>{0, 3, 4, 5}));
        std::vector<int64_t> sources;
        for (const int32_t j : layout.pair_sources) sources.push_back(part.owned_gid[j]);
        EXPECT_EQ(sources, (std::vector<int64_t>{0, 0, 1, 1, 0}));
      } else {
        EXPECT_EQ(b.sends(), 0);
        EXPECT_EQ(layout.num_pairs(), 0);
        ASSERT_EQ(b.recv_count_from(0), 2);
        EXPECT_EQ(b.recvs(), 2);
        EXPECT_EQ(b.recv_keys, (std::vector<int64_t>{6, 7}));
        // Received row c adds into the owned row of its destination, once.
        std::vector<int64_t> destination(2, -1);
        for (int64_t i = 0; i < part.num_owned(); ++i) {
          for (int64_t k = layout.halo_indptr[i]; k < layout.halo_indptr[i + 1]; ++k)
            destination[layout.halo_indices[k]] = part.owned_gid[i];
        }
        EXPECT_EQ(destination, (std::vector<int64_t>{2, 3}));
        EXPECT_EQ(layout.halo_indptr.back(), 2);
      }
    });
  }
}

}  // namespace
}  // namespace adaqp
