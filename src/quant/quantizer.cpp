#include "adaqp/quant/quantizer.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "adaqp/common/philox_rows.h"
#include "adaqp/common/vector_clones.h"
#include "adaqp/quant/quant_math.h"
#include "packing.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace adaqp::quant {
namespace {

using detail::dispatch_bits;

// Below this many elements a call runs on the calling thread only.
constexpr int64_t kParallelElements = 1 << 16;

// Philox blocks whose words round a row of d elements.
constexpr int64_t random_blocks(int64_t d) {
  return (d + kQuantElementsPerBlock - 1) / kQuantElementsPerBlock;
}

// Per-thread buffers for one row: its random words, their 16-bit halves and its codes.
struct RowScratch {
  explicit RowScratch(int64_t d)
      : words(static_cast<size_t>(philox_row_words_size(random_blocks(d)))),
        halves(2 * words.size()),
        codes(d) {}
  std::vector<uint32_t> words;
  std::vector<uint16_t> halves;
  std::vector<uint8_t> codes;
};

// Minimum and maximum of a row; false if it holds a NaN or an infinity. Integer reductions on the
// ordered bit patterns, because gcc vectorises those (float min/max reductions only under
// -ffinite-math-only).
ADAQP_VECTOR_CLONES bool row_min_max(const float* x, int64_t d, float& lo, float& hi) {
  int32_t key_lo = INT32_MAX, key_hi = INT32_MIN;
  uint32_t special = 0;
  for (int64_t e = 0; e < d; ++e) {
    int32_t bits;
    std::memcpy(&bits, x + e, sizeof(bits));
    const int32_t key = ordered_bits(bits);
    key_lo = std::min(key_lo, key);
    key_hi = std::max(key_hi, key);
    special |= (bits & 0x7F800000) == 0x7F800000 ? 1u : 0u;  // exponent all ones: NaN or inf
  }
  const int32_t bits_lo = ordered_bits(key_lo), bits_hi = ordered_bits(key_hi);
  std::memcpy(&lo, &bits_lo, sizeof(lo));
  std::memcpy(&hi, &bits_hi, sizeof(hi));
  return special == 0;
}

// The codes of a row with step s > 0 (the hot loop: Philox and rounding). Every clone gives the
// same results: integer arithmetic and single IEEE float operations, never contracted
// (-ffp-contract=off).
ADAQP_VECTOR_CLONES void stochastic_codes(const float* x, int64_t d, float m, float s, uint64_t gid,
                                          const QuantKey& key, uint32_t* words, uint16_t* halves,
                                          uint8_t* codes) {
  philox_row_words(key.seed, key.epoch, key.layer, key.stream, gid, random_blocks(d), words);
  // Element e's bits (quant_random_bits) are half e of the words read as 16-bit halves, low first.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "halves are read low half first");
  std::memcpy(halves, words, sizeof(uint16_t) * static_cast<size_t>(d));
  for (int64_t e = 0; e < d; ++e)
    codes[e] = static_cast<uint8_t>(quant_code(x[e], m, s, halves[e]));
}

// The metadata of a row as bytes: a block's pieces start anywhere, so no float alignment.
void store_meta(float m, float s, uint8_t* meta) {
  std::memcpy(meta, &m, sizeof(m));
  std::memcpy(meta + sizeof(m), &s, sizeof(s));
}

void load_meta(const uint8_t* meta, float& m, float& s) {
  std::memcpy(&m, meta, sizeof(m));
  std::memcpy(&s, meta + sizeof(m), sizeof(s));
}

// Quantizes one row into `out` and its metadata; false if the row cannot be quantized.
template <int B>
bool quantize_row(const float* x, int64_t d, uint64_t gid, const QuantKey& key, RowScratch& scratch,
                  uint8_t* out, uint8_t* meta, float* range) {
  float lo = 0.0f, hi = 0.0f;
  if (!row_min_max(x, d, lo, hi)) return false;
  const RowParams p = quant_row_params(lo, hi, B);
  if (!p.ok) return false;
  store_meta(p.m, p.s, meta);
  if (range != nullptr) *range = p.range;
  uint8_t* codes = scratch.codes.data();
  if (p.s == 0.0f) {
    std::fill(codes, codes + d, uint8_t{0});
  } else {
    stochastic_codes(x, d, p.m, p.s, gid, key, scratch.words.data(), scratch.halves.data(), codes);
  }
  detail::pack_row<B>(codes, d, out);
  return true;
}

// Code e of a packed row: the codes are the consecutive B-bit fields of the row's bytes read as one
// little-endian bit stream.
template <int B>
uint32_t code_at(const uint8_t* packed, int64_t e) {
  return (uint32_t{packed[e * B / 8]} >> (e * B % 8)) & ((1u << B) - 1u);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define ADAQP_DEQUANTIZE_AVX2 1
// The values of the row's first 8 * (d / 8) codes, 8 codes (B bytes) a vector: fields shifted out
// of a broadcast word (vpsrlvd), or bytes widened at 8 bits. gcc's own vectorisation of the unpack
// failed at 2 bits (4-way interleaved stores: 30-50% of memcpy, against 90-170% at 4 and 8 bits).
// The same IEEE operations in the same order as dequant_value: the values are bit for bit the
// scalar loop's. Returns the elements done.
template <int B, bool Add>
__attribute__((target("avx2"))) int64_t dequantize_avx2(const uint8_t* packed, int64_t d, float m,
                                                        float s, float* dst) {
  const __m256 vm = _mm256_set1_ps(m), vs = _mm256_set1_ps(s);
  const __m256i shifts = _mm256_setr_epi32(0, B, 2 * B, 3 * B, 4 * B, 5 * B, 6 * B, 7 * B);
  const __m256i mask = _mm256_set1_epi32((1 << B) - 1);
  const int64_t groups = d / 8;
  for (int64_t g = 0; g < groups; ++g) {
    __m256i q;
    if constexpr (B == 8) {
      uint64_t bytes;
      std::memcpy(&bytes, packed + 8 * g, sizeof(bytes));
      q = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(bytes)));
    } else {
      uint32_t w = 0;
      std::memcpy(&w, packed + B * g, B);
      q = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(w)), shifts), mask);
    }
    __m256 v = _mm256_add_ps(vm, _mm256_mul_ps(vs, _mm256_cvtepi32_ps(q)));
    if constexpr (Add) v = _mm256_add_ps(_mm256_loadu_ps(dst + 8 * g), v);
    _mm256_storeu_ps(dst + 8 * g, v);
  }
  return 8 * groups;
}

bool has_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}
#endif

// Dequantizes one row (adds its values to dst when Add): m + s*q, unpacked on the way.
template <int B, bool Add>
void dequantize_row(const uint8_t* packed, const uint8_t* meta, int64_t d, float* dst) {
  float m = 0.0f, s = 0.0f;
  load_meta(meta, m, s);
  int64_t e = 0;
#if ADAQP_DEQUANTIZE_AVX2
  if (has_avx2()) e = dequantize_avx2<B, Add>(packed, d, m, s, dst);
#endif
  for (; e < d; ++e) {
    const float v = dequant_value(m, s, code_at<B>(packed, e));
    dst[e] = Add ? qadd(dst[e], v) : v;
  }
}

void check_shape(int64_t d, int64_t n, int bits) {
  ADAQP_CHECK(d > 0 && n >= 0, "row width " + std::to_string(d) + ", rows " + std::to_string(n));
  ADAQP_CHECK(valid_bits(bits), "bit-width " + not_a_width(bits));
}

}  // namespace

void quantize_rows(const float* src, int64_t d, const int64_t* row_index, const int64_t* gids,
                   int64_t n, int bits, const QuantKey& key, uint8_t* packed, uint8_t* meta,
                   float* ranges) {
  check_shape(d, n, bits);
  const int64_t row_bytes = packed_row_bytes(d, bits);
  int64_t first_bad = n;
  dispatch_bits(bits, [&](auto b) {
    constexpr int B = decltype(b)::value;
#pragma omp parallel if (n * d > kParallelElements)
    {
      RowScratch scratch(d);
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = row_index == nullptr ? i : row_index[i];
        const bool ok = quantize_row<B>(
            src + row * d, d, static_cast<uint64_t>(gids[i]), key, scratch, packed + i * row_bytes,
            meta + kMetaBytesPerRow * i, ranges == nullptr ? nullptr : ranges + i);
        if (!ok) {
#pragma omp critical(adaqp_quantize_first_bad)
          first_bad = std::min(first_bad, i);
        }
      }
    }
  });
  if (first_bad < n) {
    const int64_t row = row_index == nullptr ? first_bad : row_index[first_bad];
    throw NonFiniteError(key, gids[first_bad], describe_unquantizable_row(src + row * d, d));
  }
}

void copy_full_precision_rows(const float* src, int64_t d, const int64_t* row_index,
                              const int64_t* gids, int64_t n, const QuantKey& key, uint8_t* out,
                              float* ranges) {
  ADAQP_CHECK(d > 0 && n >= 0, "row width " + std::to_string(d) + ", rows " + std::to_string(n));
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(d);
  int64_t first_bad = n;
#pragma omp parallel for schedule(static) if (n * d > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const float* x = src + (row_index == nullptr ? i : row_index[i]) * d;
    float lo = 0.0f, hi = 0.0f;
    if (!row_min_max(x, d, lo, hi)) {
#pragma omp critical(adaqp_copy_first_bad)
      first_bad = std::min(first_bad, i);
    }
    std::memcpy(out + row_bytes * i, x, row_bytes);
    if (ranges != nullptr) ranges[i] = full_precision_range(lo, hi);
  }
  if (first_bad < n) {
    const int64_t row = row_index == nullptr ? first_bad : row_index[first_bad];
    throw NonFiniteError(key, gids[first_bad], describe_unquantizable_row(src + row * d, d));
  }
}

void dequantize_rows(const uint8_t* packed, const uint8_t* meta, int64_t n, int64_t d, int bits,
                     float* dst) {
  check_shape(d, n, bits);
  const int64_t row_bytes = packed_row_bytes(d, bits);
  dispatch_bits(bits, [&](auto b) {
    constexpr int B = decltype(b)::value;
#pragma omp parallel for schedule(static) if (n * d > kParallelElements)
    for (int64_t i = 0; i < n; ++i) {
      dequantize_row<B, false>(packed + i * row_bytes, meta + kMetaBytesPerRow * i, d, dst + i * d);
    }
  });
}

void dequantize_scatter_add(const uint8_t* packed, const uint8_t* meta, int64_t n, int64_t d,
                            int bits, const int64_t* row_index, float* dst) {
  check_shape(d, n, bits);
  const int64_t row_bytes = packed_row_bytes(d, bits);
  dispatch_bits(bits, [&](auto b) {
    constexpr int B = decltype(b)::value;
#pragma omp parallel for schedule(static) if (n * d > kParallelElements)
    for (int64_t i = 0; i < n; ++i) {
      dequantize_row<B, true>(packed + i * row_bytes, meta + kMetaBytesPerRow * i, d,
                              dst + row_index[i] * d);
    }
  });
}

void pack_codes(const uint8_t* codes, int64_t d, int bits, uint8_t* packed) {
  check_shape(d, 1, bits);
  dispatch_bits(bits, [&](auto b) { detail::pack_row<decltype(b)::value>(codes, d, packed); });
}

void unpack_codes(const uint8_t* packed, int64_t d, int bits, uint8_t* codes) {
  check_shape(d, 1, bits);
  dispatch_bits(bits, [&](auto b) { detail::unpack_row<decltype(b)::value>(packed, d, codes); });
}

}  // namespace adaqp::quant
