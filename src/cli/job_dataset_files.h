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

}  // namespace adaqp::cli
