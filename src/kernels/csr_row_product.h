// One row of a CSR product, y_i (or 0) plus w_j x_{c_j} over the row's entries j in stored order:
// row_product entry by entry, row_product_avx2 with the row's columns summed in AVX2 registers and
// stored once. The entries come from a Row policy, so the plain product (spmm.cpp) and the
// dropout-masked one (dropout.cpp) share both:
//   Cursor entries(int64_t begin, int64_t end) const;   with Cursor's
//   bool next(int64_t& column, float& weight);
// giving the entries of [begin, end) that add to the row, in stored order: the row of x each one
// multiplies and its weight. The plain product gives every entry (a zero weight still multiplies:
// 0 * inf is NaN); the masked one only the kept entries of non-zero weight. (A cursor, not a
// callback: a lambda inside an AVX2 function is not AVX2 code and would not be inlined.)
// The two paths make the same multiplies and adds in the same order, so their results are equal bit
// for bit (x86-64's baseline has no fused multiply-add to contract them into, and the target adds
// none).
#pragma once

#include <cstdint>
#include <cstring>

#include "adaqp/common/cpu_features.h"

#if ADAQP_X86_PATHS
#include <immintrin.h>
#endif

namespace adaqp::kernels::detail {

template <class Row>
void row_product(const Row& row, int64_t begin, int64_t end, const float* x, int64_t d,
                 float* __restrict yi, bool accumulate) {
  if (!accumulate) std::memset(yi, 0, sizeof(float) * static_cast<size_t>(d));
  auto it = row.entries(begin, end);
  int64_t column;
  float w;
  while (it.next(column, w)) {
    const float* __restrict xj = x + column * d;
#pragma omp simd
    for (int64_t c = 0; c < d; ++c) yi[c] += w * xj[c];
  }
}

#if ADAQP_X86_PATHS

// Columns [c, c + 8 N) of the row, summed in N registers.
template <int N, class Row>
__attribute__((target("avx2"))) inline void row_columns_avx2(const Row& row, int64_t begin,
                                                             int64_t end, const float* x, int64_t d,
                                                             float* yi, int64_t c,
                                                             bool accumulate) {
  __m256 s[N];
  for (int v = 0; v < N; ++v)
    s[v] = accumulate ? _mm256_loadu_ps(yi + c + 8 * v) : _mm256_setzero_ps();
  auto it = row.entries(begin, end);
  int64_t column;
  float weight;
  while (it.next(column, weight)) {
    const __m256 w = _mm256_set1_ps(weight);
    const float* xj = x + column * d + c;
    for (int v = 0; v < N; ++v)
      s[v] = _mm256_add_ps(s[v], _mm256_mul_ps(w, _mm256_loadu_ps(xj + 8 * v)));
  }
  for (int v = 0; v < N; ++v) _mm256_storeu_ps(yi + c + 8 * v, s[v]);
}

// The last d - c < 8 columns, through masked loads and stores.
template <class Row>
__attribute__((target("avx2"))) inline void row_tail_avx2(const Row& row, int64_t begin,
                                                          int64_t end, const float* x, int64_t d,
                                                          float* yi, int64_t c, bool accumulate) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(d - c)), lanes);
  __m256 s = accumulate ? _mm256_maskload_ps(yi + c, mask) : _mm256_setzero_ps();
  auto it = row.entries(begin, end);
  int64_t column;
  float weight;
  while (it.next(column, weight)) {
    const __m256 w = _mm256_set1_ps(weight);
    s = _mm256_add_ps(s, _mm256_mul_ps(w, _mm256_maskload_ps(x + column * d + c, mask)));
  }
  _mm256_maskstore_ps(yi + c, mask, s);
}

// The row's entries [begin, end): blocks of 64 columns, then 32, 16, 8 and the tail.
template <class Row>
__attribute__((target("avx2"))) void row_product_avx2(const Row& row, int64_t begin, int64_t end,
                                                      const float* x, int64_t d, float* yi,
                                                      bool accumulate) {
  int64_t c = 0;
  for (; c + 64 <= d; c += 64) row_columns_avx2<8>(row, begin, end, x, d, yi, c, accumulate);
  if (c + 32 <= d) {
    row_columns_avx2<4>(row, begin, end, x, d, yi, c, accumulate);
    c += 32;
  }
  if (c + 16 <= d) {
    row_columns_avx2<2>(row, begin, end, x, d, yi, c, accumulate);
    c += 16;
  }
  if (c + 8 <= d) {
    row_columns_avx2<1>(row, begin, end, x, d, yi, c, accumulate);
    c += 8;
  }
  if (c < d) row_tail_avx2(row, begin, end, x, d, yi, c, accumulate);
}

#endif

// The row by the widest path cpu_isa() allows.
template <class Row>
inline void best_row_product(const Row& row, int64_t begin, int64_t end, const float* x, int64_t d,
                             float* yi, bool accumulate) {
#if ADAQP_X86_PATHS
  if (cpu_isa() >= CpuIsa::kAvx2) {
    row_product_avx2(row, begin, end, x, d, yi, accumulate);
    return;
  }
#endif
  row_product(row, begin, end, x, d, yi, accumulate);
}

}  // namespace adaqp::kernels::detail
