#include "adaqp/kernels/gather.h"

#include <cstring>

namespace adaqp::kernels {

void gather_rows_cpu(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst) {
#pragma omp parallel for schedule(static) if (n * cols > 65536)
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * cols, src + idx[i] * cols, sizeof(float) * static_cast<size_t>(cols));
  }
}

void scatter_add_rows_cpu(const float* src, int64_t cols, const int64_t* idx, int64_t n,
                          float* dst) {
#pragma omp parallel for schedule(static) if (n * cols > 65536)
  for (int64_t i = 0; i < n; ++i) {
    float* __restrict row = dst + idx[i] * cols;
    const float* __restrict add = src + i * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) row[c] += add[c];
  }
}

}  // namespace adaqp::kernels
