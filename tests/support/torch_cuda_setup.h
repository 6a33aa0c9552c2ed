// Test processes load libtorch's CUDA backend where a GPU is visible, before any test asks libtorch
// about CUDA (adaqp/tensor/torch_cuda_backend.h): the GPU tests' tensors need it, and loading it
// elsewhere would only slow every test process's start.
#pragma once

#include "adaqp/config.h"
#include "adaqp/tensor/torch_cuda_backend.h"

#if ADAQP_WITH_TORCH_CUDA
#include "adaqp/kernels/cuda_device.h"
#endif

namespace adaqp::test {

inline void load_torch_cuda_backend_where_a_gpu_is_visible() {
#if ADAQP_WITH_TORCH_CUDA
  if (kernels::cuda_device_count() > 0) load_torch_cuda_backend();
#endif
}

}  // namespace adaqp::test
