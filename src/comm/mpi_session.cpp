#include "adaqp/comm/mpi_session.h"

#include <spdlog/spdlog.h>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/common/error.h"

namespace adaqp {

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized", -1);
  if (initialized) throw InvariantError("MpiSession: MPI is already initialised");
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread", -1);
  try {
    int rank = -1;
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", -1);
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
              rank);
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

MpiSession::~MpiSession() {
  int code = MPI_Finalize();
  if (code != MPI_SUCCESS) spdlog::error("MPI_Finalize failed: {}", mpi_error_string(code));
}

}  // namespace adaqp
