#include "job_options.h"

namespace adaqp::cli {

const CLI::Validator& non_empty_path() {
  static const CLI::Validator check(
      [](const std::string& path) { return path.empty() ? std::string("an empty path") : ""; },
      "PATH");
  return check;
}

void add_job_options(CLI::App* cmd, JobOptions& opts) {
  cmd->add_option("-c,--config", opts.config, "job configuration (YAML); default: embedded job")
      ->check(non_empty_path());
  cmd->add_option("--set", opts.overrides,
                  "override one key, e.g. --set partition.parts=4 (repeatable)")
      ->allow_extra_args(false);
}

}  // namespace adaqp::cli
