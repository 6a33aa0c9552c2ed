// The one check of a CUDA runtime call in cuda/: throws CudaError "<call> failed: <error string>".
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "adaqp/common/error.h"

namespace adaqp::kernels {

inline void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess)
    throw CudaError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

}  // namespace adaqp::kernels

#define ADAQP_CUDA_CHECK(call) ::adaqp::kernels::check_cuda((call), #call)
