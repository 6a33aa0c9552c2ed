// Row gather and scatter-add: the per-peer send rows of a halo exchange (gather of the boundary
// rows) and the received partial gradients added into the boundary rows (scatter-add).
// Every entry point takes the device its pointers live on: the CPU kernels are in
// src/kernels/gather.cpp, their CUDA twins in cuda/gather.cu (enqueued on `stream`, a
// cudaStream_t; nullptr is the legacy default stream); a build without CUDA refuses a CUDA device.
#pragma once

#include <cstdint>

#include "adaqp/common/device.h"
#include "adaqp/config.h"

namespace adaqp::kernels {

// dst[i, :] = src[idx[i], :] for i < n; rows of `cols` floats.
void gather_rows(const Device& device, const float* src, int64_t cols, const int64_t* idx,
                 int64_t n, float* dst, void* stream = nullptr);
// dst[idx[i], :] += src[i, :] for i < n. The entries of idx must be distinct (rows are updated in
// parallel); each element gets one rounded addition, so the CPU and CUDA results are identical.
void scatter_add_rows(const Device& device, const float* src, int64_t cols, const int64_t* idx,
                      int64_t n, float* dst, void* stream = nullptr);

#if ADAQP_WITH_CUDA
void gather_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst,
                      void* stream);
void scatter_add_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n,
                           float* dst, void* stream);
#endif

}  // namespace adaqp::kernels
