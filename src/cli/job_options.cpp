#include "job_options.h"

namespace adaqp::cli {

void add_job_options(CLI::App* cmd, JobOptions& opts) {
  cmd->add_option("-c,--config", opts.config, "job configuration (YAML); default: embedded job");
  cmd->add_option("--set", opts.overrides,
                  "override one key, e.g. --set partition.parts=4 (repeatable)")
      ->allow_extra_args(false);
}

}  // namespace adaqp::cli
