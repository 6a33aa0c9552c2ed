// The job's dataset files as a partition directory records them (partition/dataset_files.h), the
// same on every rank.
#pragma once

#include <optional>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/config/job_config.h"
#include "adaqp/partition/dataset_files.h"

namespace adaqp::cli {

// Rank 0's listing of dataset.path, on every rank (collective; a failure to list it stops every
// rank): where every rank writes meta.yaml
// (ptscotch), the record must not depend on each host's copy of the dataset.
std::optional<std::vector<DatasetFile>> agreed_dataset_files(Communicator& comm,
                                                             const JobConfig& cfg);

}  // namespace adaqp::cli
