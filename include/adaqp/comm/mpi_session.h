// MPI start-up and shutdown for one process, as an RAII object owned by main(). Exchanges run on
// a progress thread beside the computation, so the session asks for MPI_THREAD_MULTIPLE (the
// communicator queries what the library granted, mpi_communicator.h).
#pragma once

#include <mpi.h>

#include <atomic>

#include "adaqp/common/timeouts.h"

namespace adaqp {

class MpiSession {
 public:
  // MPI_Init_thread requesting MPI_THREAD_MULTIPLE, then MPI_ERRORS_RETURN on MPI_COMM_WORLD so
  // every MPI failure becomes a return code (and a CommError) instead of an abort. Throws
  // InvariantError if MPI is already initialised, CommError if initialisation fails.
  MpiSession(int* argc, char*** argv);
  // MPI_Finalize; failures are logged, never thrown. Open MPI's waits there for every process of
  // the job: a process stopped, dead or cut off after the job's last collective would hold this one
  // forever. So the wait is bounded (common/wait_bound.h) by end_timeout_s(): past it, one error
  // line names this rank, and the process exits 1 (its own work is done; the launcher then ends
  // the job).
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // The bound of MPI_Finalize's wait: kDefaultTimeoutS until a command sets its job's
  // communication.timeout_s.
  void set_end_timeout(double seconds) { end_timeout_s_ = seconds; }
  double end_timeout_s() const { return end_timeout_s_; }

 private:
  int rank_ = -1;
  std::atomic<double> end_timeout_s_{kDefaultTimeoutS};
};

}  // namespace adaqp
