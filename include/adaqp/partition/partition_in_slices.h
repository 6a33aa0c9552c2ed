// partition.method ptscotch end to end: the dataset loaded as slices (graph/slice_loader.h),
// PT-Scotch's owners (partition/ptscotch_partitioner.h), every rank's part built from the slices
// (partition/part_from_slices.h) and written as a partition directory, with no rank holding more
// than its slice and its part.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/partition/partition_dir.h"

namespace adaqp {

struct DistributedPartition {
  Part part;  // this rank's (rank r holds part r)
  PartitionMeta meta;
};

// What partition_distributed does, in a message naming a rank that fell silent meanwhile
// (PT-Scotch's own waits have no bound: the CLI watches the ranks, cli/collective_step.h's
// run_watched).
inline constexpr const char* kPtscotchWork =
    "the ranks were partitioning the dataset with PT-Scotch";

// Collective over `comm` (and `mpi`, the same ranks, for PT-Scotch); opt.parts must equal the rank
// count. Writes `dir` as write_partition lays it out (meta.yaml, part-<r>/part.bin): every rank
// writes its part and meta.yaml into <dir>.tmp-<token>, then the ranks, in order, rename that
// folder into place where they still see it. On a filesystem all ranks share, `dir` ends up
// complete; where each host has its own, each host's `dir` holds meta.yaml and the parts of its
// ranks, which is what partition.distribute auto reads on a restart. `dir` must not exist.
// `before` (optional) runs on rank 0 with its slice and the whole dataset's split sizes (train,
// validation, test nodes) once the slices are loaded and before any partitioning: a caller's
// checks of the dataset (what it will train), whose error ends the call on every rank with nothing
// written.
DistributedPartition partition_distributed(
    const DatasetSpec& spec, const PartitionOptions& opt, const std::string& dir, MPI_Comm mpi,
    Communicator& comm, const CollectiveStep& step,
    const std::function<void(const GraphSlice&, const std::array<int64_t, 3>&)>& before = {});

// The part and meta data of this rank for owners already chosen (one per slice node; method and
// seed recorded from `opt`): build_part_from_slices plus the meta data write_partition records.
DistributedPartition build_distributed_partition(const GraphSlice& s,
                                                 const std::vector<int32_t>& owner,
                                                 const PartitionOptions& opt, Communicator& comm);

// The writing step alone, for a part already built: meta.yaml is `meta` (the same on every rank).
void write_distributed_partition(const std::string& dir, const Part& part,
                                 const PartitionMeta& meta, Communicator& comm,
                                 const CollectiveStep& step);

}  // namespace adaqp
