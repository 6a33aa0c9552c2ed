#include "adaqp/comm/mpi_error.h"

#include <fmt/format.h>

#include "adaqp/common/error.h"

namespace adaqp {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "unknown MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

void check_mpi(int code, const char* call, int rank, int peer) {
  if (code == MPI_SUCCESS) return;
  std::string where = peer < 0 ? "" : fmt::format(" (peer {})", peer);
  throw CommError(
      fmt::format("{} failed on rank {}{}: {}", call, rank, where, mpi_error_string(code)));
}

}  // namespace adaqp
