#include "adaqp/kernels/synchronize.h"

#include "adaqp/config.h"
#include "adaqp/kernels/no_cuda.h"
#if ADAQP_WITH_CUDA
#include "adaqp/kernels/cuda_device.h"
#endif

namespace adaqp::kernels {

void synchronize(const Device& device) {
  if (!device.is_cuda()) return;
#if ADAQP_WITH_CUDA
  cuda_synchronize(device.index);
#else
  no_cuda("synchronize");
#endif
}

}  // namespace adaqp::kernels
