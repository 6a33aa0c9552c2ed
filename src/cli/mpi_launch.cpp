#include "mpi_launch.h"

#include <CLI/CLI.hpp>
#include <string>

#include "adaqp/comm/launcher.h"
#include "adaqp/common/error.h"

namespace adaqp::cli {

std::unique_ptr<MpiSession> start_mpi() {
  const std::string problem = mpi_launch_problem();
  if (!problem.empty()) {
    if (!first_launched_process()) throw CLI::RuntimeError(1);
    throw ConfigError(problem);
  }
  return std::make_unique<MpiSession>(nullptr, nullptr);
}

}  // namespace adaqp::cli
