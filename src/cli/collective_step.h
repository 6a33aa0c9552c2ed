// The CLI's start-up step over MPI (CollectiveStep, comm/communicator.h): runs `step` on this
// rank, then agrees with all ranks; if any failed, the lowest failing rank rethrows its error
// (main prints it) and the others exit non-zero without a message. An error of a rank other than 0
// that not every rank met comes from that rank's own files or host, so it travels as a RankFailure
// naming both (rank 0's are the job's: the checks only rank 0 makes, the dataset it partitions).
#pragma once

#include <CLI/CLI.hpp>

#include <exception>
#include <functional>
#include <string>

#include "adaqp/comm/communicator.h"

namespace adaqp::cli {

// "rank R (host H)": where an error of one rank happened.
std::string rank_and_host(int rank);

// An error met on some ranks only: main prints `error()` as "adaqp: error on `where()`: ...".
class RankFailure : public std::exception {
 public:
  RankFailure(int rank, std::exception_ptr error);
  const char* what() const noexcept override { return where_.c_str(); }
  const std::string& where() const { return where_; }
  std::exception_ptr error() const { return error_; }

 private:
  std::string where_;
  std::exception_ptr error_;
};

template <typename Step>
void run_step(Communicator& comm, Step&& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  int first_failed = -1, failed = 0;
  if (!any_rank_failed(comm, error != nullptr, &first_failed, &failed)) return;
  if (comm.rank() != first_failed) throw CLI::RuntimeError(1);
  if (comm.rank() != 0 && failed < comm.size()) throw RankFailure(comm.rank(), error);
  std::rethrow_exception(error);
}

// run_step as a CollectiveStep for library code.
inline CollectiveStep collective_step(Communicator& comm) {
  return [&comm](const std::function<void()>& f) { run_step(comm, f); };
}

}  // namespace adaqp::cli
