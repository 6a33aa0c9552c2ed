// Getting every rank its part when only the launch host sees the partition directory.
//
// Rank 0 reads the partition's meta.yaml and sends its text to all ranks. Each rank then takes its
// part from the first of these that holds it (partition.distribute, common/choices.h):
//   1. the partition directory itself, when this rank sees the same meta.yaml there (not under
//      scatter; rank 0 always reads there);
//   2. its host-local cache, <cache>/partition-<CRC-32 of meta.yaml>/, written by an earlier run
//      (a cached part whose array checksums or structure fail is dropped and fetched again);
//   3. rank 0, which streams it the file in chunks of bounded size over the job's communicator;
//      the receiver writes it under a temporary name, checks the whole file's CRC-32, syncs and
//      renames it into the cache, then loads it from there.
// Under shared, a rank that cannot read its part from the directory is an InputError naming it. No
// rank holds more than one chunk of a part in flight; a transfer that fails on either end still
// runs to its announced end, so that the other end is not left waiting. A process killed during a
// transfer leaves only a temporary file (part.bin.tmp-<pid>), which the next run removes. Rank 0
// sends the parts one after another: the others wait for all of them as long as it shows signs of
// life (comm/solo_work.h), not only communication.timeout_s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "adaqp/comm/communicator.h"
#include "adaqp/common/choices.h"
#include "adaqp/partition/part.h"
#include "adaqp/partition/partition_dir.h"

namespace adaqp {

struct PartDistributionOptions {
  PartDistribution mode = PartDistribution::kAuto;
  std::string cache_dir;                  // host-local cache root (JobConfig: part_cache_dir)
  size_t chunk_bytes = size_t{16} << 20;  // largest piece of a part in flight
};

// Where this rank's part came from, and what moved.
struct ObtainedPart {
  Part part;
  PartitionMeta meta;
  std::string source;          // "partition directory", "cache" or "rank 0"
  std::string path;            // the file it was loaded from
  int64_t bytes_received = 0;  // this rank: bytes of its part received from rank 0
  int64_t bytes_sent = 0;      // rank 0: bytes of parts sent, all ranks together
  int parts_sent = 0;          // rank 0: how many ranks it sent a part
  double transfer_s = 0;       // this rank's time in the transfer step
};

// Collective over `comm` (host buffers: an MPI communicator). `dir` is the partition directory as
// rank 0 sees it; the partition must have comm.size() parts. Every step runs through `step`, so a
// failure on any rank ends the call on every rank.
ObtainedPart obtain_part(Communicator& comm, const std::string& dir,
                         const PartDistributionOptions& opt, const CollectiveStep& step);

// The cache folder of the partition whose meta.yaml is `meta_text`, under `cache_root`.
std::string part_cache_path(const std::string& cache_root, const std::string& meta_text);

}  // namespace adaqp
