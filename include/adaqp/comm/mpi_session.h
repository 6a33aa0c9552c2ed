// MPI start-up and shutdown for one process, as an RAII object owned by main(). Exchanges run on
// a progress thread beside the computation, so the session asks for MPI_THREAD_MULTIPLE and
// records what the library granted.
#pragma once

#include <mpi.h>

namespace adaqp {

class MpiSession {
 public:
  // MPI_Init_thread requesting MPI_THREAD_MULTIPLE, then MPI_ERRORS_RETURN on MPI_COMM_WORLD so
  // every MPI failure becomes a return code (and a CommError) instead of an abort. Throws
  // InvariantError if MPI is already initialised, CommError if initialisation fails.
  MpiSession(int* argc, char*** argv);
  // MPI_Finalize; failures are logged, never thrown.
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // The thread level MPI provided (MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE).
  int thread_level() const { return thread_level_; }
  bool thread_multiple() const { return thread_level_ == MPI_THREAD_MULTIPLE; }

 private:
  int thread_level_ = MPI_THREAD_SINGLE;
};

}  // namespace adaqp
