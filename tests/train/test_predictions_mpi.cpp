// write_node_rows under mpirun at 1..4 ranks: every rank's rows land at their nodes' global ids in
// the one .npy rank 0 writes (read back by the NumPy reader), whatever order and share each rank
// holds (none, for some); ids that do not cover every node exactly once are an error on rank 0 that
// leaves no file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/npy.h"
#include "adaqp/train/predictions.h"
#include "mpi_world.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

// A directory made by rank 0 and removed with it (other ranks get an empty path: they write
// nothing).
class RootDir {
 public:
  explicit RootDir(int rank) {
    if (rank != 0) return;
    char name[] = "/tmp/adaqp-node-rows-XXXXXX";
    ADAQP_CHECK(::mkdtemp(name) != nullptr, "mkdtemp");
    path_ = name;
  }
  ~RootDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const {
    return path_.empty() ? "" : path_ + "/" + name;
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    return names;
  }

 private:
  std::string path_;
};

// This rank's nodes of n, in descending order: of the first half those with v % world == rank, and
// the whole second half on the last rank, so that the ranks hold unequal shares.
std::vector<int64_t> my_nodes(int64_t n, int rank, int world) {
  std::vector<int64_t> gids;
  for (int64_t v = n - 1; v >= 0; --v) {
    const int owner = v < n / 2 ? static_cast<int>(v % world) : world - 1;
    if (owner == rank) gids.push_back(v);
  }
  return gids;
}

TEST(NodeRows, EveryRanksRowsLandAtTheirGlobalIds) {
  const std::unique_ptr<Communicator> comm = test::world_comm();
  const int rank = comm->rank(), world = comm->size();
  const RootDir dir(rank);
  constexpr int64_t kNodes = 37;
  const std::vector<int64_t> gids = my_nodes(kNodes, rank, world);

  NodeRows classes;  // int64, one a node: 7 v + 1
  std::vector<int64_t> values;
  for (int64_t v : gids) values.push_back(7 * v + 1);
  classes.bytes.resize(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(classes.bytes.data(), values.data(), classes.bytes.size());
  write_node_rows(*comm, gids, kNodes, classes, dir.file("classes.npy"));

  NodeRows flags;  // uint8, 3 a node: (v + c) % 2
  flags.dtype = NpyDtype::kUInt8;
  flags.columns = 3;
  for (int64_t v : gids)
    for (int64_t c = 0; c < 3; ++c) flags.bytes.push_back(static_cast<uint8_t>((v + c) % 2));
  write_node_rows(*comm, gids, kNodes, flags, dir.file("flags.npy"));

  // Every node on the last rank: the others (rank 0 among them when W > 1) have no rows.
  std::vector<int64_t> all;
  NodeRows last_only;
  if (rank == world - 1) {
    for (int64_t v = 0; v < kNodes; ++v) {
      all.push_back(v);
      const int64_t value = 3 * v;
      const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
      last_only.bytes.insert(last_only.bytes.end(), bytes, bytes + sizeof(value));
    }
  }
  write_node_rows(*comm, all, kNodes, last_only, dir.file("last.npy"));

  if (rank != 0) return;
  const NpyArray last = read_npy(dir.file("last.npy"));
  ASSERT_EQ(last.shape, std::vector<int64_t>{kNodes});
  for (int64_t v = 0; v < kNodes; ++v) EXPECT_EQ(npy_element<int64_t>(last, v), 3 * v) << v;
  const NpyArray a = read_npy(dir.file("classes.npy"));
  ASSERT_EQ(a.dtype, NpyDtype::kInt64);
  ASSERT_EQ(a.shape, std::vector<int64_t>{kNodes});
  for (int64_t v = 0; v < kNodes; ++v) EXPECT_EQ(npy_element<int64_t>(a, v), 7 * v + 1) << v;
  const NpyArray b = read_npy(dir.file("flags.npy"));
  ASSERT_EQ(b.dtype, NpyDtype::kUInt8);
  ASSERT_EQ(b.shape, (std::vector<int64_t>{kNodes, 3}));
  for (int64_t v = 0; v < kNodes; ++v)
    for (int64_t c = 0; c < 3; ++c) EXPECT_EQ(b.payload[v * 3 + c], (v + c) % 2) << v << ", " << c;
  EXPECT_EQ(dir.entries().size(), 3u);  // no temporary file left
}

TEST(NodeRows, IdsThatMissOrRepeatANodeAreAnErrorOnRankZeroAndNoFile) {
  const std::unique_ptr<Communicator> comm = test::world_comm();
  const int rank = comm->rank(), world = comm->size();
  const RootDir dir(rank);
  constexpr int64_t kNodes = 11;
  std::vector<int64_t> gids = my_nodes(kNodes, rank, world);
  const auto rows_of = [](const std::vector<int64_t>& ids) {
    NodeRows r;
    r.bytes.assign(ids.size() * sizeof(int64_t), 0);
    return r;
  };
  // A node more than the ranks hold.
  const auto missing = [&] {
    write_node_rows(*comm, gids, kNodes + 1, rows_of(gids), dir.file("missing.npy"));
  };
  // The last rank sends node 0 again in place of its node 10: as many ids as nodes.
  std::vector<int64_t> twice = gids;
  if (rank == world - 1) twice.front() = 0;
  const auto repeated = [&] {
    write_node_rows(*comm, twice, kNodes, rows_of(twice), dir.file("repeated.npy"));
  };
  if (rank == 0) {
    EXPECT_EQ(test::error_of<InvariantError>(missing),
              "node rows: the ranks hold 11 of the 12 nodes");
    EXPECT_EQ(
        test::error_of<InvariantError>(repeated),
        "node rows: global id 0 came twice (again from rank " + std::to_string(world - 1) + ")");
    EXPECT_TRUE(dir.entries().empty());
  } else {
    EXPECT_NO_THROW(missing());
    EXPECT_NO_THROW(repeated());
  }
  // Rows that do not match the ids: an error on the rank that has them, before any transfer.
  NodeRows short_rows = rows_of(gids);
  short_rows.bytes.resize(short_rows.bytes.size() + 1);
  EXPECT_THAT(test::error_of<InvariantError>(
                  [&] { write_node_rows(*comm, gids, kNodes, short_rows, dir.file("short.npy")); }),
              ::testing::EndsWith(std::to_string(short_rows.bytes.size()) + " bytes of rows for " +
                                  std::to_string(gids.size()) + " ids of 8 bytes each"));
}

}  // namespace
}  // namespace adaqp
