#include "adaqp/quant/quantizer.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "adaqp/common/cpu_features.h"
#include "adaqp/common/philox_rows.h"
#include "adaqp/common/prefetch.h"
#include "adaqp/common/vector_clones.h"
#include "adaqp/quant/quant_math.h"
#include "ieee_subnormals.h"
#include "packing.h"

#if ADAQP_X86_PATHS
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

// Per-thread buffer for one row's random words.
struct RowScratch {
  explicit RowScratch(int64_t d)
      : words(static_cast<size_t>(philox_row_words_size(random_blocks(d)))) {}
  std::vector<uint32_t> words;
};

// Minimum and maximum of a row in the IEEE total order (-0 below +0, as ordered_bits); false if it
// holds a NaN or an infinity. Integer reductions of the bit patterns, which gcc vectorises (float
// min/max only under -ffinite-math-only): as signed integers the non-negative floats keep their
// order, as unsigned ones every negative float lies above them in reverse order. So the minimum is
// the largest unsigned pattern if the row has a negative value, else the smallest; the maximum is
// the largest signed one if it has a non-negative value, else the smallest unsigned one. A NaN or
// an infinity has the largest patterns of its sign (exponent all ones), so one in the row makes the
// maximum (sign clear) or the minimum (sign set) one too: the ends alone tell, with no reduction
// of magnitudes beside them.
ADAQP_CLONED_BODY bool row_min_max_body(const float* x, int64_t d, float& lo, float& hi) {
  int32_t signed_max = INT32_MIN;
  uint32_t unsigned_min = UINT32_MAX, unsigned_max = 0;
#pragma GCC unroll 4
  for (int64_t e = 0; e < d; ++e) {
    uint32_t bits;
    std::memcpy(&bits, x + e, sizeof(bits));
    signed_max = std::max(signed_max, static_cast<int32_t>(bits));
    unsigned_min = std::min(unsigned_min, bits);
    unsigned_max = std::max(unsigned_max, bits);
  }
  constexpr uint32_t kSign = 0x80000000u, kMagnitude = 0x7FFFFFFFu, kInfinity = 0x7F800000u;
  const uint32_t bits_lo = unsigned_max >= kSign ? unsigned_max : unsigned_min;
  const uint32_t bits_hi = unsigned_min < kSign ? static_cast<uint32_t>(signed_max) : unsigned_min;
  std::memcpy(&lo, &bits_lo, sizeof(lo));
  std::memcpy(&hi, &bits_hi, sizeof(hi));
  return (bits_lo & kMagnitude) < kInfinity && (bits_hi & kMagnitude) < kInfinity;
}
ADAQP_VECTOR_CLONES(bool, row_min_max, (const float* x, int64_t d, float& lo, float& hi),
                    (x, d, lo, hi))

#if ADAQP_X86_PATHS
// The packed codes of the row's first 32 * (d / 32) elements (two Philox blocks), 32 a step:
// quant_code's operations in its order on 8 lanes (so the codes are the scalar formula's, bit for
// bit), the 32 codes narrowed to bytes in element order, then for B < 8 joined into B-bit fields
// (vpmaddubsw / vpmaddwd: q0 + 2^B q1 ...) and stored. `random` is the row's Philox words read as
// bytes: element e's random byte is random[e] (quant_random_byte). Returns the elements done.
template <int B>
__attribute__((target("avx2"))) int64_t packed_codes_avx2(const float* x, int64_t d,
                                                          const RowParams& p, const uint8_t* random,
                                                          uint8_t* out) {
  const __m256 vm = _mm256_set1_ps(p.m), vs = _mm256_set1_ps(p.s), vr = _mm256_set1_ps(p.r);
  const __m256 grid = _mm256_set1_ps(256.0f), half = _mm256_set1_ps(0.5f);
  const bool by_product = p.r > 0.0f;
  const __m256i element_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const int64_t groups = d / 32;
  for (int64_t g = 0; g < groups; ++g) {
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      const int64_t e = 32 * g + 8 * k;
      const __m256 diff = _mm256_sub_ps(_mm256_loadu_ps(x + e), vm);
      const __m256 scaled =
          by_product ? _mm256_mul_ps(diff, vr) : _mm256_mul_ps(_mm256_div_ps(diff, vs), grid);
      const __m256i n = _mm256_cvttps_epi32(_mm256_add_ps(scaled, half));
      const __m256i bytes =
          _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(random + e)));
      q[k] = _mm256_srli_epi32(_mm256_add_epi32(n, bytes), 8);
    }
    // Bytes of the 32 codes; the in-lane packs leave the codes 4i..4i+3 of vector k at dword
    // 4i + k.
    const __m256i bytes = _mm256_permutevar8x32_epi32(
        _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_packus_epi32(q[2], q[3])),
        element_order);
    if constexpr (B == 8) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32 * g), bytes);
    } else if constexpr (B == 4) {
      const __m256i pairs = _mm256_maddubs_epi16(bytes, _mm256_set1_epi16(0x1001));
      const __m256i narrow = _mm256_permute4x64_epi64(_mm256_packus_epi16(pairs, pairs), 0x08);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * g), _mm256_castsi256_si128(narrow));
    } else {
      const __m256i pairs = _mm256_maddubs_epi16(bytes, _mm256_set1_epi16(0x0401));
      const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi32(0x00100001));
      const __m256i low_bytes = _mm256_shuffle_epi8(
          quads, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4,
                                  8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1));
      const __m256i narrow =
          _mm256_permutevar8x32_epi32(low_bytes, _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 8 * g), _mm256_castsi256_si128(narrow));
    }
  }
  return 32 * groups;
}
// GCC 12's AVX-512 intrinsics warn about their own _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // clang has no such warning and warns about the name
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The packed codes of the row's first 16 * (d / 16) elements (one Philox block), 16 a step, as
// packed_codes_avx2 computes them on 8 lanes: quant_code's operations in its order on 16 lanes, the
// codes narrowed to bytes in element order (vpmovdb), then for B < 8 joined into B-bit fields as
// there. Returns the elements done.
template <int B>
__attribute__((target("avx512f"))) int64_t packed_codes_avx512(const float* x, int64_t d,
                                                               const RowParams& p,
                                                               const uint8_t* random,
                                                               uint8_t* out) {
  const __m512 vm = _mm512_set1_ps(p.m), vs = _mm512_set1_ps(p.s), vr = _mm512_set1_ps(p.r);
  const __m512 grid = _mm512_set1_ps(256.0f), half = _mm512_set1_ps(0.5f);
  const bool by_product = p.r > 0.0f;
  const int64_t blocks = d / 16;
  for (int64_t g = 0; g < blocks; ++g) {
    const int64_t e = 16 * g;
    const __m512 diff = _mm512_sub_ps(_mm512_loadu_ps(x + e), vm);
    const __m512 scaled =
        by_product ? _mm512_mul_ps(diff, vr) : _mm512_mul_ps(_mm512_div_ps(diff, vs), grid);
    const __m512i n = _mm512_cvttps_epi32(_mm512_add_ps(scaled, half));
    const __m512i k =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(random + e)));
    const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_srli_epi32(_mm512_add_epi32(n, k), 8));
    if constexpr (B == 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * g), bytes);
    } else if constexpr (B == 4) {
      const __m128i pairs = _mm_maddubs_epi16(bytes, _mm_set1_epi16(0x1001));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 8 * g), _mm_packus_epi16(pairs, pairs));
    } else {
      const __m128i pairs = _mm_maddubs_epi16(bytes, _mm_set1_epi16(0x0401));
      const __m128i quads = _mm_madd_epi16(pairs, _mm_set1_epi32(0x00100001));
      const auto word = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_shuffle_epi8(
          quads, _mm_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1))));
      std::memcpy(out + 4 * g, &word, sizeof(word));
    }
  }
  return 16 * blocks;
}
#pragma GCC diagnostic pop
#endif

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
  if (p.s == 0.0f) {
    std::fill(out, out + packed_row_bytes(d, B), uint8_t{0});
    return true;
  }
  uint32_t* words = scratch.words.data();
  const int64_t blocks = random_blocks(d);
  philox_row_words(key.seed, key.epoch, key.layer, key.stream, gid, blocks, words);
  int64_t done = 0;
#if ADAQP_X86_PATHS
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "random bytes are read low byte first");
  const CpuIsa isa = cpu_isa();
  const auto* random = reinterpret_cast<const uint8_t*>(words);
  if (isa == CpuIsa::kAvx512) {
    done = packed_codes_avx512<B>(x, d, p, random, out);
  } else if (isa == CpuIsa::kAvx2) {
    done = packed_codes_avx2<B>(x, d, p, random, out);
  }
#endif
  // The rest starts on a block (32 or 16 elements a vector step).
  static_assert(32 % kQuantElementsPerBlock == 0 && 16 % kQuantElementsPerBlock == 0,
                "the vector paths end on a block");
  for (int64_t blk = done / kQuantElementsPerBlock; blk < blocks; ++blk) {
    const PhiloxWords w{
        {words[4 * blk], words[4 * blk + 1], words[4 * blk + 2], words[4 * blk + 3]}};
    quant_pack_block<B>(x, d, p, w, blk, out);
  }
  return true;
}

// Code e of a packed row: the codes are the consecutive B-bit fields of the row's bytes read as one
// little-endian bit stream.
template <int B>
uint32_t code_at(const uint8_t* packed, int64_t e) {
  return (uint32_t{packed[e * B / 8]} >> (e * B % 8)) & ((1u << B) - 1u);
}

#if ADAQP_X86_PATHS
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

#endif

// Dequantizes one row (adds its values to dst when Add): m + s*q, unpacked on the way.
template <int B, bool Add>
void dequantize_row(const uint8_t* packed, const uint8_t* meta, int64_t d, float* dst) {
  float m = 0.0f, s = 0.0f;
  load_meta(meta, m, s);
  int64_t e = 0;
#if ADAQP_X86_PATHS
  if (cpu_isa() >= CpuIsa::kAvx2) e = dequantize_avx2<B, Add>(packed, d, m, s, dst);
#endif
  for (; e < d; ++e) {
    const float v = dequant_value(m, s, code_at<B>(packed, e));
    dst[e] = Add ? qadd(dst[e], v) : v;
  }
}

// Asks for the row a loop over rows i = 0..n-1 of src (row_index[i] where given) reaches
// kPrefetchRows rows later. Contiguous rows too: on a Xeon (family 6 model 207) the hardware
// prefetchers alone left the row's min/max pass waiting for memory (bench_quant, one thread:
// quantizing at 44% of memcpy, 61-69% with the hint, medians of 5 alternated rounds).
void prefetch_row_ahead(const float* src, int64_t d, const int64_t* row_index, int64_t i,
                        int64_t n) {
  const int64_t ahead = i + kPrefetchRows;
  if (ahead >= n) return;
  prefetch_bytes(src + (row_index == nullptr ? ahead : row_index[ahead]) * d,
                 sizeof(float) * static_cast<size_t>(d));
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
      const detail::IeeeSubnormals ieee;
      RowScratch scratch(d);
#pragma omp for schedule(static) reduction(min : first_bad)
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = row_index == nullptr ? i : row_index[i];
        prefetch_row_ahead(src, d, row_index, i, n);
        const bool ok = quantize_row<B>(
            src + row * d, d, static_cast<uint64_t>(gids[i]), key, scratch, packed + i * row_bytes,
            meta + kMetaBytesPerRow * i, ranges == nullptr ? nullptr : ranges + i);
        if (!ok) first_bad = std::min(first_bad, i);
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
#pragma omp parallel if (n * d > kParallelElements)
  {
    const detail::IeeeSubnormals ieee;
#pragma omp for schedule(static) reduction(min : first_bad)
    for (int64_t i = 0; i < n; ++i) {
      prefetch_row_ahead(src, d, row_index, i, n);
      const float* x = src + (row_index == nullptr ? i : row_index[i]) * d;
      float lo = 0.0f, hi = 0.0f;
      if (!row_min_max(x, d, lo, hi)) first_bad = std::min(first_bad, i);
      std::memcpy(out + row_bytes * i, x, row_bytes);
      if (ranges != nullptr) ranges[i] = full_precision_range(lo, hi);
    }
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
#pragma omp parallel if (n * d > kParallelElements)
    {
      const detail::IeeeSubnormals ieee;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        dequantize_row<B, false>(packed + i * row_bytes, meta + kMetaBytesPerRow * i, d,
                                 dst + i * d);
      }
    }
  });
}

void dequantize_scatter_add(const uint8_t* packed, const uint8_t* meta, int64_t n, int64_t d,
                            int bits, const int64_t* row_index, float* dst) {
  check_shape(d, n, bits);
  const int64_t row_bytes = packed_row_bytes(d, bits);
  dispatch_bits(bits, [&](auto b) {
    constexpr int B = decltype(b)::value;
#pragma omp parallel if (n * d > kParallelElements)
    {
      const detail::IeeeSubnormals ieee;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < n; ++i) {
        if (i + kPrefetchRows < n) {
          prefetch_bytes<true>(dst + row_index[i + kPrefetchRows] * d,
                               sizeof(float) * static_cast<size_t>(d));
        }
        dequantize_row<B, true>(packed + i * row_bytes, meta + kMetaBytesPerRow * i, d,
                                dst + row_index[i] * d);
      }
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
