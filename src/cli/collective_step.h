// The CLI's start-up step over MPI (CollectiveStep, comm/communicator.h): runs `step` on this
// rank, then agrees with all ranks; if any failed, the lowest failing rank prints its error and
// every rank exits non-zero (CLI::RuntimeError), the others without a message. An error of a rank
// other than 0 that not every rank met comes from that rank's own files or host, so it travels as a
// RankFailure naming both (rank 0's are the job's: the checks only rank 0 makes, the dataset it
// partitions). A SilentPeerError (comm/solo_work.h) ends the job from the rank that met it, without
// the agreement: the silent rank would hold that.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/solo_work.h"

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

// Prints the one line of an error that ended the command ("adaqp: error[ on WHERE]: ...") and
// returns the exit code: 1, or 2 for an internal error.
int report_error(const std::exception_ptr& error, const std::string& where);

// Ends the whole job from this rank (MPI_Abort with `code`) once its output is flushed: for an
// error the other ranks cannot agree on, as MPI's own end would wait for them too.
[[noreturn]] void abort_job(int code);

// How long a rank that is not the first to report an error common to several waits for the
// first to end the job: mpirun's kill reaches other hosts through their daemons, 2 s was not
// always enough on the virtual cluster at 20 Mbit/s.
constexpr std::chrono::seconds kLateReportS{10};

template <typename Step>
void run_step(Communicator& comm, Step&& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (const SilentPeerError& e) {
    // Every waiting rank meets the silence at about the same time: the first of them reports it,
    // the others only if the job still runs a moment later.
    if (comm.rank() != (e.root() == 0 ? 1 : 0)) std::this_thread::sleep_for(kLateReportS);
    abort_job(report_error(std::current_exception(), ""));
  } catch (...) {
    error = std::current_exception();
  }
  int first_failed = -1, failed = 0;
  if (!any_rank_failed(comm, error != nullptr, &first_failed, &failed)) return;
  if (comm.rank() != first_failed) throw CLI::RuntimeError(1);
  // Printed now, before MPI ends: the other ranks exit only once this one reaches MPI_Finalize, so
  // mpirun, stopping the job at their exit, cannot cut this message off.
  if (comm.rank() != 0 && failed < comm.size())
    throw CLI::RuntimeError(
        report_error(std::make_exception_ptr(RankFailure(comm.rank(), error)), ""));
  throw CLI::RuntimeError(report_error(error, ""));
}

// run_step as a CollectiveStep for library code.
inline CollectiveStep collective_step(Communicator& comm) {
  return [&comm](const std::function<void()>& f) { run_step(comm, f); };
}

}  // namespace adaqp::cli
