// Row gather and scatter-add: the per-peer send buffers of a halo exchange (gather of the boundary
// rows) and the received partial gradients added into the boundary rows (scatter-add).
// The CUDA entry points take device pointers and an opaque stream (cudaStream_t as void*), so that
// callers never include CUDA headers; they exist only when ADAQP_WITH_CUDA is 1.
#pragma once

#include <cstdint>

#include "adaqp/config.h"

namespace adaqp::kernels {

// dst[i, :] = src[idx[i], :] for i < n; rows of `cols` floats.
void gather_rows_cpu(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst);
// dst[idx[i], :] += src[i, :] for i < n. The entries of idx must be distinct (rows are updated in
// parallel); each element gets one rounded addition, so the CPU and CUDA results are identical.
void scatter_add_rows_cpu(const float* src, int64_t cols, const int64_t* idx, int64_t n,
                          float* dst);

#if ADAQP_WITH_CUDA
void gather_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst,
                      void* stream);
void scatter_add_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n,
                           float* dst, void* stream);
#endif

}  // namespace adaqp::kernels
