// MPI start-up and shutdown for one process, as an RAII object owned by main(). Exchanges run on
// a progress thread beside the computation, so the session asks for MPI_THREAD_MULTIPLE (the
// communicator queries what the library granted, mpi_communicator.h).
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
};

}  // namespace adaqp
