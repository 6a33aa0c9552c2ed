#include "adaqp/partition/part_agreement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdint>
#include <vector>

#include "adaqp/common/crc.h"
#include "adaqp/common/error.h"
#include "adaqp/common/rng.h"
#include "adaqp/partition/partition_dir.h"

namespace adaqp {
namespace {

// A rank's contribution: per peer, the rows it sends there and their CRC, the halo rows it expects
// from there and theirs (kPerPeer values); then its own training, validation and test nodes and
// its global_split_counts (kSplits values each); then its owned nodes, the sum of owned_hash over
// them, and its global_num_nodes (kOwned values).
constexpr int kPerPeer = 4;
constexpr int kSplits = 3;
constexpr int kOwned = 3;
int64_t contribution_size(int world) {
  return kPerPeer * world + 2 * kSplits + kOwned;
}

constexpr char kRepartition[] =
    "the parts come from different partitionings (partition again: adaqp train --repartition)";

// Summed over a set of node ids (mod 2^64), the same for every order: sets that differ give
// different sums but for a chance of 2^-64.
uint64_t owned_hash(int64_t gid) {
  return mix_seed(static_cast<uint64_t>(gid));
}

// The CRC of rows' (global id, in-degree, out-degree[, node type]) in order.
class RowsCrc {
 public:
  void add(int64_t gid, int64_t in_degree, int64_t out_degree, int64_t type) {
    const std::array<int64_t, 4> row{gid, in_degree, out_degree, type};
    crc_ = crc_bytes(crc_, row.data(), sizeof(row));
  }
  int64_t value() const { return crc_; }

 private:
  uint32_t crc_ = kCrcEmpty;
};

}  // namespace

std::vector<int64_t> part_contribution(const Part& p) {
  const int world = p.num_parts;
  std::vector<int64_t> out(static_cast<size_t>(contribution_size(world)), 0);
  const bool typed = p.heterogeneous();
  for (int q = 0; q < world; ++q) {
    if (q == p.rank) continue;
    RowsCrc sent, expected;
    for (int64_t k = p.send_offsets[q]; k < p.send_offsets[q + 1]; ++k) {
      const auto i = static_cast<size_t>(p.send_idx[static_cast<size_t>(k)]);
      sent.add(p.owned_gid[i], p.owned_in_degree[i], p.owned_out_degree[i],
               typed ? p.owned_type[i] : 0);
    }
    for (int64_t j = p.halo_offsets[q]; j < p.halo_offsets[q + 1]; ++j) {
      const auto h = static_cast<size_t>(j);
      expected.add(p.halo_gid[h], p.halo_in_degree[h], p.halo_out_degree[h],
                   typed ? p.halo_type[h] : 0);
    }
    int64_t* peer = out.data() + kPerPeer * q;
    peer[0] = p.send_count_to(q);
    peer[1] = sent.value();
    peer[2] = p.halo_count_from(q);
    peer[3] = expected.value();
  }
  int64_t* splits = out.data() + kPerPeer * world;
  splits[0] = static_cast<int64_t>(p.train_idx.size());
  splits[1] = static_cast<int64_t>(p.valid_idx.size());
  splits[2] = static_cast<int64_t>(p.test_idx.size());
  for (int k = 0; k < kSplits; ++k)
    splits[kSplits + k] = p.global_split_counts[static_cast<size_t>(k)];
  int64_t* owned = splits + 2 * kSplits;
  uint64_t hash = 0;
  for (int64_t gid : p.owned_gid) hash += owned_hash(gid);
  owned[0] = p.num_owned();
  owned[1] = static_cast<int64_t>(hash);
  owned[2] = p.global_num_nodes;
  return out;
}

void check_parts_agree(Communicator& comm, const Part& part, const std::string& dir) {
  const int world = comm.size();
  ADAQP_CHECK_EQ(part.num_parts, world, "parts against ranks");
  const int64_t size = contribution_size(world);
  const std::vector<int64_t> mine = part_contribution(part);
  std::vector<int64_t> all(static_cast<size_t>(size * world));
  comm.allgather(mine.data(), all.data(), sizeof(int64_t) * static_cast<size_t>(size));
  check_contributions_agree(all, world, dir);
}

void check_contributions_agree(const std::vector<int64_t>& all, int world, const std::string& dir) {
  const int64_t size = contribution_size(world);
  ADAQP_CHECK_EQ(static_cast<int64_t>(all.size()), size * world, "contributions against parts");
  const auto of = [&](int r) { return all.data() + size * r; };
  const auto path = [&](int r) { return partition_part_path(dir, r); };

  for (int r = 0; r < world; ++r) {
    for (int q = 0; q < world; ++q) {
      if (q == r) continue;
      const int64_t* sends = of(r) + kPerPeer * q;
      const int64_t* expects = of(q) + kPerPeer * r;
      if (sends[0] != expects[2]) {
        throw InputError(path(r), "",
                         fmt::format("part {} sends {} rows to part {}, whose {} expects {} halo "
                                     "rows from it: the parts come from different partitionings "
                                     "(partition again: adaqp train --repartition)",
                                     r, sends[0], q, path(q), expects[2]));
      }
      if (sends[1] != expects[3]) {
        throw InputError(path(r), "",
                         fmt::format("the {} rows part {} sends to part {} are not, in global id, "
                                     "degrees and type, the halo rows {} expects from it: the "
                                     "parts come from different partitionings or datasets "
                                     "(partition again: adaqp train --repartition)",
                                     sends[0], r, q, path(q)));
      }
    }
  }
  std::array<int64_t, kSplits> held{};
  for (int r = 0; r < world; ++r) {
    for (int k = 0; k < kSplits; ++k) held[static_cast<size_t>(k)] += of(r)[kPerPeer * world + k];
  }
  for (int r = 0; r < world; ++r) {
    const int64_t* counts = of(r) + kPerPeer * world + kSplits;
    const std::array<int64_t, kSplits> said{counts[0], counts[1], counts[2]};
    if (said != held) {
      throw InputError(path(r), "array 'global_split_counts'",
                       fmt::format("{} training, validation and test nodes, but the {} parts hold "
                                   "{} of them: the parts come from different partitionings or "
                                   "datasets (partition again: adaqp train --repartition)",
                                   said, world, held));
    }
  }
  // Every node owned by exactly one part: parts whose rows and halos agree (no edge between them,
  // say) may still come from two partitionings, owning some nodes twice and others not at all.
  const auto owned = [&](int r) { return of(r) + kPerPeer * world + 2 * kSplits; };
  const int64_t nodes = owned(0)[2];
  int64_t count = 0;
  uint64_t hash = 0;
  for (int r = 0; r < world; ++r) {
    if (owned(r)[2] != nodes)
      throw InputError(path(r), "",
                       fmt::format("a graph of {} nodes, but {} says {}: {}", owned(r)[2], path(0),
                                   nodes, kRepartition));
    count += owned(r)[0];
    hash += static_cast<uint64_t>(owned(r)[1]);
  }
  uint64_t every = 0;
  for (int64_t v = 0; v < nodes; ++v) every += owned_hash(v);
  if (count != nodes || hash != every) {
    throw InputError(
        dir, "",
        fmt::format("its {} parts own {} nodes{} of a graph of {}: {}", world, count,
                    count == nodes ? ", not each node once," : "", nodes, kRepartition));
  }
}

}  // namespace adaqp
