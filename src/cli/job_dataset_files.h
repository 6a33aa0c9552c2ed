// The job's dataset files as a partition directory records them (partition/dataset_files.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "adaqp/config/job_config.h"
#include "adaqp/partition/dataset_files.h"

namespace adaqp::cli {

// The files under dataset.path, without the job's own directories that may lie inside it (the
// partition directory `partition_dir`, output, checkpoints, the host-local part cache); nullopt
// for a generated graph or where dataset.path is not a directory here.
std::optional<std::vector<DatasetFile>> job_dataset_files(const JobConfig& cfg,
                                                          const std::string& partition_dir);

}  // namespace adaqp::cli
