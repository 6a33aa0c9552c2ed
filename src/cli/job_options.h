// The job options every subcommand shares: --config FILE and repeated --set section.key=value.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "adaqp/config/job_config.h"

namespace adaqp::cli {

struct JobOptions {
  std::string config;  // empty = the embedded default job
  std::vector<std::string> overrides;

  JobConfig load() const { return load_job_config(config, overrides); }
};

// A path option's check: an empty path (`--config ''`, an unset variable) is refused, not taken
// for the option's absence.
const CLI::Validator& non_empty_path();

// Adds --config and --set to `cmd`, storing into `opts`.
void add_job_options(CLI::App* cmd, JobOptions& opts);

}  // namespace adaqp::cli
