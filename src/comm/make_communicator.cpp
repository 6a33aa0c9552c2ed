#include "adaqp/comm/make_communicator.h"

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/config.h"
#if ADAQP_WITH_CUDA && ADAQP_WITH_NCCL
#include "adaqp/comm/nccl_communicator.h"
#include "adaqp/kernels/cuda_device.h"
#endif

namespace adaqp {

std::unique_ptr<Communicator> make_communicator(Backend backend, MPI_Comm comm, int device,
                                                double timeout_s) {
  switch (backend) {
    case Backend::kMpi:
      return make_mpi_communicator(comm, timeout_s);
    case Backend::kNccl: {
#if ADAQP_WITH_CUDA && ADAQP_WITH_NCCL
      // The communicator first: its set-up agrees on every rank's failure, this one's included.
      auto nccl = make_nccl_communicator(comm, device, timeout_s);
      kernels::cuda_set_device(device);
      return nccl;
#else
      (void)device;
      throw ConfigError("communication.backend nccl needs a build with CUDA and NCCL");
#endif
    }
    case Backend::kAuto:
      break;
  }
  throw InvariantError("make_communicator: backend auto is resolved by placement first");
}

}  // namespace adaqp
