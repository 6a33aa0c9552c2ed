#include "adaqp/kernels/spmm.h"

#include <cstring>
#include <limits>
#include <string>

#include "adaqp/common/error.h"

namespace adaqp::kernels {

namespace {

// Below this many multiply-adds a product runs on one thread (the fork costs more).
constexpr int64_t kParallelWork = 1 << 15;

}  // namespace

void spmm_cpu(const CsrView& a, const float* x, int64_t d, float* y, bool accumulate) {
  const int64_t work = (a.rows > 0 ? a.indptr[a.rows] : 0) * d;
#pragma omp parallel for schedule(dynamic, 64) if (work > kParallelWork)
  for (int64_t i = 0; i < a.rows; ++i) {
    float* __restrict yi = y + i * d;
    if (!accumulate) std::memset(yi, 0, sizeof(float) * static_cast<size_t>(d));
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const float w = a.values[k];
      const float* __restrict xj = x + static_cast<int64_t>(a.indices[k]) * d;
#pragma omp simd
      for (int64_t c = 0; c < d; ++c) yi[c] += w * xj[c];
    }
  }
}

CsrMatrix transpose_csr(const CsrView& a) {
  ADAQP_CHECK(a.rows <= std::numeric_limits<int32_t>::max(),
              "too many rows for 32-bit column indices: " + std::to_string(a.rows));
  CsrMatrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  const int64_t nnz = a.rows > 0 ? a.indptr[a.rows] : 0;
  t.indptr.assign(static_cast<size_t>(a.cols) + 1, 0);
  for (int64_t k = 0; k < nnz; ++k) ++t.indptr[static_cast<size_t>(a.indices[k]) + 1];
  for (int64_t c = 0; c < a.cols; ++c) t.indptr[c + 1] += t.indptr[c];
  t.indices.resize(static_cast<size_t>(nnz));
  t.values.resize(static_cast<size_t>(nnz));
  std::vector<int64_t> next(t.indptr.begin(), t.indptr.end() - 1);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const int64_t pos = next[a.indices[k]]++;
      t.indices[pos] = static_cast<int32_t>(i);
      t.values[pos] = a.values[k];
    }
  }
  return t;
}

}  // namespace adaqp::kernels
