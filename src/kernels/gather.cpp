#include "adaqp/kernels/gather.h"

#include <cstring>

#include "adaqp/common/prefetch.h"
#include "adaqp/kernels/no_cuda.h"

namespace adaqp::kernels {

void gather_rows(const Device& device, const float* src, int64_t cols, const int64_t* idx,
                 int64_t n, float* dst, void* stream) {
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    gather_rows_cuda(src, cols, idx, n, dst, stream);
    return;
#else
    no_cuda("gather_rows");
#endif
  }
  (void)stream;
#pragma omp parallel for schedule(static) if (n * cols > 65536)
  for (int64_t i = 0; i < n; ++i) {
    if (i + kPrefetchRows < n) {
      prefetch_bytes(src + idx[i + kPrefetchRows] * cols,
                     sizeof(float) * static_cast<size_t>(cols));
    }
    std::memcpy(dst + i * cols, src + idx[i] * cols, sizeof(float) * static_cast<size_t>(cols));
  }
}

void scatter_add_rows(const Device& device, const float* src, int64_t cols, const int64_t* idx,
                      int64_t n, float* dst, void* stream) {
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    scatter_add_rows_cuda(src, cols, idx, n, dst, stream);
    return;
#else
    no_cuda("scatter_add_rows");
#endif
  }
  (void)stream;
#pragma omp parallel for schedule(static) if (n * cols > 65536)
  for (int64_t i = 0; i < n; ++i) {
    if (i + kPrefetchRows < n) {
      prefetch_bytes<true>(dst + idx[i + kPrefetchRows] * cols,
                           sizeof(float) * static_cast<size_t>(cols));
    }
    float* __restrict row = dst + idx[i] * cols;
    const float* __restrict add = src + i * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) row[c] += add[c];
  }
}

}  // namespace adaqp::kernels
