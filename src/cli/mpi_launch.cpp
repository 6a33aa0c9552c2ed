#include "mpi_launch.h"

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <string>

#include "adaqp/comm/launcher.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/solo_work.h"
#include "adaqp/common/error.h"
#include "adaqp/common/timeouts.h"
#include "collective_step.h"

namespace adaqp::cli {

std::unique_ptr<MpiSession> start_mpi() {
  const std::string problem = mpi_launch_problem();
  if (!problem.empty()) {
    if (!first_launched_process()) throw CLI::RuntimeError(1);
    throw ConfigError(problem);
  }
  return std::make_unique<MpiSession>(nullptr, nullptr);
}

void run_on_first_rank(const std::string& what, const std::function<void()>& work) {
  if (!mpi_launch_problem().empty()) {
    if (first_launched_process()) work();
    return;
  }
  const std::unique_ptr<MpiSession> mpi = start_mpi();
  const std::unique_ptr<Communicator> comm =
      make_mpi_communicator(MPI_COMM_WORLD, kDefaultTimeoutS);
  run_step(*comm, [&] {
    SoloWork solo(*comm, 0, what);
    if (solo.is_root()) work();
    solo.finish();
  });
}

}  // namespace adaqp::cli
