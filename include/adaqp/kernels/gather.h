// Row gather: dst[i, :] = src[idx[i], :]. Builds the per-peer send buffers of a halo exchange.
// The CUDA entry points take device pointers and an opaque stream (cudaStream_t as void*), so that
// callers never include CUDA headers; they exist only when ADAQP_WITH_CUDA is 1.
#pragma once

#include <cstdint>

#include "adaqp/config.h"

namespace adaqp::kernels {

void gather_rows_cpu(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst);

#if ADAQP_WITH_CUDA
void gather_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst,
                      void* stream);
// Number of visible CUDA devices; 0 when there is no driver or device.
int cuda_device_count();
#endif

}  // namespace adaqp::kernels
