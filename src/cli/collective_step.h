// The CLI's start-up step over MPI (CollectiveStep, comm/communicator.h): runs `step` on this
// rank, then agrees with all ranks; if any failed, the lowest failing rank prints its error and
// every rank exits non-zero (CLI::RuntimeError), the others without a message. An error of a rank
// other than 0 that not every rank met comes from that rank's own files or host, so it travels as a
// RankFailure naming both (rank 0's are the job's: the checks only rank 0 makes, the dataset it
// partitions). A SilentPeerError (comm/signs.h), or any other CommError in the step or the
// agreement (a peer stopped or cut off), ends the job from the rank that met it, without the
// agreement: the rank that went quiet would hold that, and MPI's end after it.
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/peer_watch.h"
#include "adaqp/comm/signs.h"
#include "adaqp/common/error.h"
#include "adaqp/common/timeouts.h"

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

// An error's message on one line: libtorch's errors carry a C++ backtrace after theirs.
const char* one_line_message(const std::exception& e);

// Whether `e` says that memory ran out: std::bad_alloc, or libtorch's allocators (on a device
// c10::OutOfMemoryError; on the CPU a c10::Error saying that it cannot allocate).
bool out_of_memory(const std::exception& e);

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

// Ends the job on a silence that this rank found (comm/signs.h), without the ranks' agreement,
// which the silent rank would hold: every rank that waits finds it at about the same time, so
// the first of them reports it and the others only if the job still runs kLateReportS later.
[[noreturn]] void end_job_on_silence(const Communicator& comm, const SilentPeerError& e);

// Ends the job on `error`, a CommError this rank met (a peer that did not answer within
// communication.timeout_s, or is gone), without the ranks' agreement: the peer would hold it, and
// MPI's own end after it. Rank 0 reports it; the others, which may meet it at about the same time,
// only if the job still runs kLateReportS later (rank 0 itself is the one that went quiet).
[[noreturn]] void end_job_on_comm_error(const Communicator& comm, const std::exception_ptr& error);

template <typename Step>
void run_step(Communicator& comm, Step&& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (const SilentPeerError& e) {
    end_job_on_silence(comm, e);
  } catch (const CommError&) {
    end_job_on_comm_error(comm, std::current_exception());
  } catch (...) {
    error = std::current_exception();
  }
  int first_failed = -1, failed = 0;
  bool any_failed = false;
  try {
    any_failed = any_rank_failed(comm, error != nullptr, &first_failed, &failed);
  } catch (const CommError&) {
    end_job_on_comm_error(comm, std::current_exception());  // a rank holds the agreement
  }
  if (!any_failed) return;
  if (comm.rank() != first_failed) throw CLI::RuntimeError(1);
  // Printed now, before MPI ends: the other ranks exit only once this one reaches MPI_Finalize, so
  // mpirun, stopping the job at their exit, cannot cut this message off.
  if (comm.rank() != 0 && failed < comm.size())
    throw CLI::RuntimeError(
        report_error(std::make_exception_ptr(RankFailure(comm.rank(), error)), ""));
  throw CLI::RuntimeError(report_error(error, ""));
}

// Runs `work`, which every rank does together partly inside code with no bound of ours
// (PT-Scotch's MPI calls), under a PeerWatch (comm/peer_watch.h): a rank silent for the
// communicator's timeout (communication.timeout_s) ends the job. The communicator's own waits
// meanwhile are bounded by kSoloWorkTimeoutS, as the ranks' shares of the work differ. An error
// `work` meets outside its steps ends the job from this rank (abort_job). Returns what `work`
// returns.
template <typename Work>
auto run_watched(Communicator& comm, const std::string& what, Work&& work) {
  const double timeout_s = comm.timeout();
  std::optional<PeerWatch> watch;
  try {
    watch.emplace(comm, what, [&comm](const SilentPeerError& e) { end_job_on_silence(comm, e); });
  } catch (const CommError& e) {  // a rank that never joined the watch's communicator
    end_job_on_silence(comm, SilentPeerError(-1, fmt::format("{}, as {}", e.what(), what)));
  }
  // The timeout comes back also when `work` throws: a collective while the error unwinds is
  // bounded as any other.
  struct Restore {
    Communicator& comm;
    double timeout_s;
    ~Restore() { comm.set_timeout(timeout_s); }
  };
  auto result = [&] {
    const Restore restore{comm, timeout_s};
    comm.set_timeout(std::max(timeout_s, kSoloWorkTimeoutS));
    try {
      return work();
    } catch (const CLI::RuntimeError&) {
      throw;  // agreed at a step: every rank leaves together
    } catch (...) {
      // Met by this rank alone outside a step (its host out of memory, say): the others wait for
      // it under kSoloWorkTimeoutS, and its MPI_Finalize would wait for them. Every rank may meet
      // it too (PT-Scotch's errors are the ranks' together): rank 0 reports, the others only if
      // the job still runs kLateReportS later. The report itself may run out of memory: the job
      // ends all the same.
      if (comm.rank() != 0) std::this_thread::sleep_for(kLateReportS);
      int code = 1;
      try {
        code = report_error(std::current_exception(), rank_and_host(comm.rank()));
      } catch (...) {
      }
      abort_job(code);
    }
  }();
  watch->finish();
  return result;
}

// run_step as a CollectiveStep for library code.
inline CollectiveStep collective_step(Communicator& comm) {
  return [&comm](const std::function<void()>& f) { run_step(comm, f); };
}

}  // namespace adaqp::cli
