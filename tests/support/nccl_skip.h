// Whether this mpirun job can run the NCCL tests: a GPU per rank, or ranks sharing GPUs with a
// distinct NCCL_HOSTID each. Only in NCCL builds.
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/kernels/cuda_device.h"

namespace adaqp::test {

inline int world_rank() {
  int rank = 0;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", -1);
  return rank;
}

inline int world_size() {
  int size = 1;
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size", -1);
  return size;
}

// Why this job cannot run the NCCL tests ("" if it can); the same answer on every rank.
inline std::string nccl_skip_reason() {
  std::string why;
  const int devices = kernels::cuda_device_count(&why);
  const int size = world_size();
  std::string reason;
  if (devices == 0) {
    reason = "no CUDA device visible (" + why + ")";
  } else if (devices < size && std::getenv("NCCL_HOSTID") == nullptr) {
    reason = std::to_string(size) + " ranks share " + std::to_string(devices) +
             " GPU(s): NCCL needs one GPU per rank, or a distinct NCCL_HOSTID per rank";
  }
  int local = reason.empty() ? 0 : 1, any = 0;
  check_mpi(MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce",
            world_rank());
  if (any != 0 && reason.empty()) reason = "another rank cannot run the NCCL tests";
  return reason;
}

}  // namespace adaqp::test
