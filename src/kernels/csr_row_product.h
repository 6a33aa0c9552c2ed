// One row of a CSR product, y_i (or 0) plus w_j x_{c_j} over the row's entries j in stored order:
// row_product entry by entry, row_product_avx2 and row_product_avx512 with the row's columns summed
// in vector registers and stored once. The entries come from a Row policy, so the plain product
// (spmm.cpp) and the dropout-masked one (dropout.cpp) share both:
//   Cursor entries(int64_t begin, int64_t end) const;   with Cursor's
//   bool next(int64_t& column, float& weight);
// giving the entries of [begin, end) that add to the row, in stored order: the row of x each one
// multiplies and its weight. The plain product gives every entry (a zero weight still multiplies:
// 0 * inf is NaN); the masked one only the kept entries of non-zero weight. (A cursor, not a
// callback: a lambda inside an AVX2 function is not AVX2 code and would not be inlined.)
// The paths make the same multiplies and adds in the same order, so their results are equal bit
// for bit (x86-64's baseline and the AVX2 target have no fused multiply-add to contract them into;
// the AVX-512 path's operations cannot be contracted, add_product_avx512).
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

// GCC 12's AVX-512 intrinsics warn about their own _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // clang has no such warning and warns about the name
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// AVX-512: twice the columns a register, so a row of up to 256 columns is one pass over its entries
// (32 registers hold 16 sums, the weight and the loaded row); on a core with full-width 512-bit
// units (Zen 5, Intel) half the instructions of the AVX2 path.
// s + w x with the product rounded before the sum, as on the other paths: GCC contracts a plain
// multiply and add into a fused one where the target has FMA (AVX-512 does, AVX2 alone does not),
// never the forms with a rounding mode.
__attribute__((target("avx512f"))) inline __m512 add_product_avx512(__m512 s, __m512 w, __m512 x) {
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  return _mm512_add_round_ps(s, _mm512_mul_round_ps(w, x, kNearest), kNearest);
}

// Columns [c, c + 16 N) of the row, summed in N registers.
template <int N, class Row>
__attribute__((target("avx512f"))) inline void row_columns_avx512(const Row& row, int64_t begin,
                                                                  int64_t end, const float* x,
                                                                  int64_t d, float* yi, int64_t c,
                                                                  bool accumulate) {
  __m512 s[N];
  for (int v = 0; v < N; ++v)
    s[v] = accumulate ? _mm512_loadu_ps(yi + c + 16 * v) : _mm512_setzero_ps();
  auto it = row.entries(begin, end);
  int64_t column;
  float weight;
  while (it.next(column, weight)) {
    const __m512 w = _mm512_set1_ps(weight);
    const float* xj = x + column * d + c;
    for (int v = 0; v < N; ++v) s[v] = add_product_avx512(s[v], w, _mm512_loadu_ps(xj + 16 * v));
  }
  for (int v = 0; v < N; ++v) _mm512_storeu_ps(yi + c + 16 * v, s[v]);
}

// The last d - c < 16 columns, through masked loads and stores.
template <class Row>
__attribute__((target("avx512f"))) inline void row_tail_avx512(const Row& row, int64_t begin,
                                                               int64_t end, const float* x,
                                                               int64_t d, float* yi, int64_t c,
                                                               bool accumulate) {
  const auto mask = static_cast<__mmask16>((1u << (d - c)) - 1u);
  __m512 s = accumulate ? _mm512_maskz_loadu_ps(mask, yi + c) : _mm512_setzero_ps();
  auto it = row.entries(begin, end);
  int64_t column;
  float weight;
  while (it.next(column, weight)) {
    const __m512 w = _mm512_set1_ps(weight);
    s = add_product_avx512(s, w, _mm512_maskz_loadu_ps(mask, x + column * d + c));
  }
  _mm512_mask_storeu_ps(yi + c, mask, s);
}

// The row's entries [begin, end): blocks of 256 columns, then 128, 64, 32, 16 and the tail.
template <class Row>
__attribute__((target("avx512f"))) void row_product_avx512(const Row& row, int64_t begin,
                                                           int64_t end, const float* x, int64_t d,
                                                           float* yi, bool accumulate) {
  int64_t c = 0;
  for (; c + 256 <= d; c += 256) row_columns_avx512<16>(row, begin, end, x, d, yi, c, accumulate);
  if (c + 128 <= d) {
    row_columns_avx512<8>(row, begin, end, x, d, yi, c, accumulate);
    c += 128;
  }
  if (c + 64 <= d) {
    row_columns_avx512<4>(row, begin, end, x, d, yi, c, accumulate);
    c += 64;
  }
  if (c + 32 <= d) {
    row_columns_avx512<2>(row, begin, end, x, d, yi, c, accumulate);
    c += 32;
  }
  if (c + 16 <= d) {
    row_columns_avx512<1>(row, begin, end, x, d, yi, c, accumulate);
    c += 16;
  }
  if (c < d) row_tail_avx512(row, begin, end, x, d, yi, c, accumulate);
}

#pragma GCC diagnostic pop

#endif

// The row by the widest path cpu_isa() allows.
template <class Row>
inline void best_row_product(const Row& row, int64_t begin, int64_t end, const float* x, int64_t d,
                             float* yi, bool accumulate) {
#if ADAQP_X86_PATHS
  const CpuIsa isa = cpu_isa();
  if (isa == CpuIsa::kAvx512) {
    row_product_avx512(row, begin, end, x, d, yi, accumulate);
    return;
  }
  if (isa == CpuIsa::kAvx2) {
    row_product_avx2(row, begin, end, x, d, yi, accumulate);
    return;
  }
#endif
  row_product(row, begin, end, x, d, yi, accumulate);
}

}  // namespace adaqp::kernels::detail
