// MPI for a command that runs under a launcher (train, partition), and for one that a single
// process does (generate, info) should a launcher start several.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "adaqp/comm/mpi_session.h"

namespace adaqp::cli {

// Starts MPI, unless the launcher left it no way to start (comm/launcher.h): then a ConfigError
// naming the remedy on the job's first process, CLI::RuntimeError(1) (exit 1, no message) on the
// others, so that the job prints it once.
std::unique_ptr<MpiSession> start_mpi();

// Runs `work` on the job's first process while the others wait for it (comm/solo_work.h: as long
// as it shows signs of life), so that a command of one process started by `mpirun -np N` writes
// once, prints once and ends with the same status on every rank (its error said once, every rank
// non-zero). `what` names the work in an error of the wait ("generating the graph"). Where MPI
// cannot start (srun without an MPI plugin), the first process works alone and the others leave.
void run_on_first_rank(const std::string& what, const std::function<void()>& work);

}  // namespace adaqp::cli
