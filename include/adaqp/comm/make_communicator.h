// The communicator of a job's transport (communication.backend as placed, config/placement.h).
#pragma once

#include <mpi.h>

#include <memory>

#include "adaqp/comm/communicator.h"
#include "adaqp/common/choices.h"

namespace adaqp {

// kMpi: host memory over `comm`; kNccl: device memory of CUDA device `device`, which becomes the
// calling thread's current device (libtorch's and the kernels'); collective over `comm` (its set-up
// agrees on every rank's failure). ConfigError for kNccl in a build without CUDA and NCCL, and for
// kAuto (placement resolves it first).
std::unique_ptr<Communicator> make_communicator(Backend backend, MPI_Comm comm, int device,
                                                double timeout_s);

}  // namespace adaqp
