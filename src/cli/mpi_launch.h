// MPI for a command that runs under a launcher (train, partition with ptscotch).
#pragma once

#include <memory>

#include "adaqp/comm/mpi_session.h"

namespace adaqp::cli {

// Starts MPI, unless the launcher left it no way to start (comm/launcher.h): then a ConfigError
// naming the remedy on the job's first process, CLI::RuntimeError(1) (exit 1, no message) on the
// others, so that the job prints it once.
std::unique_ptr<MpiSession> start_mpi();

}  // namespace adaqp::cli
