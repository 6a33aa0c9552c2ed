// The one place MPI return codes become exceptions: every MPI call in the project goes through
// check_mpi so a failure names the call, the rank and the peer it concerns.
#pragma once

#include <mpi.h>

#include <string>

namespace adaqp {

// MPI_Error_string of `code`, or "unknown MPI error <code>".
std::string mpi_error_string(int code);

// Throws CommError "<call> failed on rank R (peer P): <MPI error string>" unless code is
// MPI_SUCCESS; peer < 0 leaves the peer out.
void check_mpi(int code, const char* call, int rank, int peer = -1);

}  // namespace adaqp
