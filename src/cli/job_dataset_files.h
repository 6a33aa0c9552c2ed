// The record of the dataset's files (partition/dataset_files.h) the same on every rank.
#pragma once

#include <optional>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/dataset_files.h"

namespace adaqp::cli {

// Rank 0's `listing` on every rank (collective; the other ranks' argument is ignored): where every
// rank writes meta.yaml (ptscotch), the record must not depend on each host's copy of the dataset.
std::optional<std::vector<DatasetFile>> broadcast_dataset_files(
    Communicator& comm, const std::optional<std::vector<DatasetFile>>& listing);

// Where every rank reads the dataset itself (ptscotch): an InputError on a rank whose copy of `dir`
// differs from rank 0's `listing` (from broadcast_dataset_files; nothing is compared without one):
// a stale copy on one host would otherwise give the ranks slices of different graphs. Run it in a
// collective step.
void require_rank0s_dataset_copy(const std::string& dir,
                                 const std::optional<std::vector<DatasetFile>>& listing, int rank);

}  // namespace adaqp::cli
