// Every rank of `adaqp train` runs one job: each loads its configuration itself (its --config file
// and --set arguments), and a file that differs between hosts would hang an exchange, fail in one,
// or train something else without a word.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/config/job_config.h"

namespace adaqp::cli {

// Collective: compares this rank's configuration with rank 0's, every key but those that may name
// a host's own paths or resources (dataset.path, partition.dir, partition.local_dir,
// training.checkpoint_dir, output.dir, training.threads, output.log_level), and then its command
// line's `options` (name, value: --resume, --repartition; rank 0's decide what the job does).
// ConfigError naming the first key or option that differs and both values.
void require_same_job(Communicator& comm, const JobConfig& cfg,
                      const std::vector<std::pair<std::string, std::string>>& options);

}  // namespace adaqp::cli
