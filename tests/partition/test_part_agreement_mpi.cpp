// The ranks' parts belong together (partition/part_agreement.h), at every world size the MPI tests
// run: the parts of one partitioning agree; parts of two partitionings, a halo row that differs
// from its owner's row, or split counts that are not what the parts hold, are one InputError on
// every rank, naming the part files. (Parts of two partitionings made the exchange's receives
// smaller than what arrived, and Open MPI's shared-memory transport wrote past them.)
#include <gtest/gtest.h>

#include <string>

#include "adaqp/common/error.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part_agreement.h"
#include "mpi_skip.h"
#include "mpi_world.h"
#include "test_util.h"

namespace adaqp {
namespace {

const char* const kDir = "/partitions/job";

Graph agreement_graph() {
  GeneratorOptions o;
  o.num_nodes = 400;
  o.avg_degree = 6;
  o.feat_dim = 4;
  o.seed = 3;
  return generate_graph(o);
}

Part part_of(const Graph& g, int parts, int rank, uint64_t seed) {
  PartitionOptions popt;
  popt.method = PartitionMethod::kRandom;
  popt.parts = parts;
  popt.seed = seed;
  return build_part(g, assign_parts(g, popt), rank);
}

// The error check_parts_agree throws on this rank ("" if none).
std::string disagreement(Communicator& comm, const Part& part) {
  try {
    check_parts_agree(comm, part, kDir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PartAgreement, ThePartsOfOnePartitioningAgree) {
  auto comm = test::world_comm();
  const Graph g = agreement_graph();
  EXPECT_EQ(disagreement(*comm, test::my_part(g, *comm)), "");
  EXPECT_EQ(disagreement(*comm, part_of(g, comm->size(), comm->rank(), 5)), "");
}

TEST(PartAgreement, PartsOfTwoPartitioningsAreRefusedOnEveryRank) {
  auto comm = test::world_comm();
  const Graph g = agreement_graph();
  // Rank 0's part of one random partitioning, the others' of another.
  const Part part = part_of(g, comm->size(), comm->rank(), comm->rank() == 0 ? 5 : 6);
  const std::string error = disagreement(*comm, part);
  // One part alone has no peer to disagree with.
  if (comm->size() == 1) {
    EXPECT_EQ(error, "");
    return;
  }
  EXPECT_TRUE(test::contains(error, std::string(kDir) + "/part-")) << error;
  EXPECT_TRUE(test::contains(error, "the parts come from different partitionings")) << error;
}

TEST(PartAgreement, AHaloRowThatIsNotItsOwnersRowIsRefused) {
  auto comm = test::world_comm();
  const Graph g = agreement_graph();
  Part part = test::my_part(g, *comm);
  // The last rank's first halo row from rank 0: same count, another out-degree.
  const int last = comm->size() - 1;
  if (comm->size() == 1) {
    EXPECT_EQ(part.num_halo(), 0);  // no halo row to edit
    return;
  }
  if (comm->rank() == last) {
    ASSERT_GT(part.halo_count_from(0), 0);
    part.halo_out_degree[static_cast<size_t>(part.halo_offsets[0])] += 1;
  }
  const std::string error = disagreement(*comm, part);
  EXPECT_TRUE(test::contains(error, std::string(kDir) + "/part-0/part.bin: the ")) << error;
  EXPECT_TRUE(test::contains(error, "rows part 0 sends to part " + std::to_string(last) +
                                        " are not, in global id, degrees and type, the halo rows " +
                                        kDir + "/part-" + std::to_string(last) + "/part.bin"))
      << error;
}

TEST(PartAgreement, SplitCountsMustBeWhatThePartsHold) {
  auto comm = test::world_comm();
  const Graph g = agreement_graph();
  Part part = test::my_part(g, *comm);
  const int64_t held = part.global_split_counts[0];
  if (comm->rank() == 0) part.global_split_counts[0] = held - 1;
  const std::string error = disagreement(*comm, part);
  EXPECT_TRUE(test::contains(error, std::string(kDir) +
                                        "/part-0/part.bin: array 'global_split_counts': [" +
                                        std::to_string(held - 1) + ", "))
      << error;
  EXPECT_TRUE(test::contains(error, "parts hold [" + std::to_string(held) + ", ")) << error;
}

// 20 pairs of nodes joined both ways, no other edge: parts of whole pairs have no boundary, so
// their send lists and halos agree whatever partitioning each comes from; and no node in a split.
Graph pairs_graph() {
  std::vector<int64_t> src, dst;
  for (int64_t v = 0; v < 40; v += 2) {
    src.insert(src.end(), {v, v + 1});
    dst.insert(dst.end(), {v + 1, v});
  }
  Graph g = Graph::from_edges(40, src, dst);
  g.feat_dim = 1;
  g.features.assign(40, 1.0f);
  g.num_classes = 2;
  g.labels.assign(40, 0);
  g.labels[1] = 1;
  return g;  // no split: split counts tell parts of two partitionings apart where owned counts do
}

// Rank 0's part of one partitioning of whole pairs, the others' of another: no send list or split
// count can tell, but some nodes are owned twice and others by no part (training ran on them,
// exit status 0, found by a review, 2026-12-08).
TEST(PartAgreement, PartsOwningANodeTwiceAreRefused) {
  auto comm = test::world_comm();
  const int world = comm->size();
  ADAQP_REQUIRE_RANKS(world, 2);  // one part owns every node
  const Graph g = pairs_graph();
  std::vector<int32_t> owner(40);
  for (int64_t v = 0; v < 40; ++v) {
    const int64_t pair = v / 2;
    owner[static_cast<size_t>(v)] =
        static_cast<int32_t>((comm->rank() == 0 ? pair : pair + 1) % world);
  }
  const Part part = build_part(g, owner, comm->rank());
  ASSERT_EQ(part.num_halo(), 0);
  const std::string error = disagreement(*comm, part);
  EXPECT_TRUE(
      test::contains(error, std::string(kDir) + ": its " + std::to_string(world) + " parts own "))
      << error;
  EXPECT_TRUE(
      test::contains(error, "of a graph of 40: the parts come from different partitionings"))
      << error;
}

}  // namespace
}  // namespace adaqp
