// The CLI's start-up step over MPI (CollectiveStep, comm/communicator.h): runs `step` on this
// rank, then agrees with all ranks; if any failed, the lowest failing rank rethrows its error
// (main prints it) and the others exit non-zero without a message.
#pragma once

#include <CLI/CLI.hpp>

#include <exception>
#include <functional>

#include "adaqp/comm/communicator.h"

namespace adaqp::cli {

template <typename Step>
void run_step(Communicator& comm, Step&& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  int first_failed = -1;
  if (!any_rank_failed(comm, error != nullptr, &first_failed)) return;
  if (comm.rank() == first_failed) std::rethrow_exception(error);
  throw CLI::RuntimeError(1);
}

// run_step as a CollectiveStep for library code.
inline CollectiveStep collective_step(Communicator& comm) {
  return [&comm](const std::function<void()>& f) { run_step(comm, f); };
}

}  // namespace adaqp::cli
