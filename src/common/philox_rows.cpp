#include "adaqp/common/philox_rows.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ADAQP_PHILOX_AVX512 1
#endif

namespace adaqp {
namespace {

// One batch, block by block: the reference every faster path equals.
void batch_by_block(PhiloxWords counter, uint32_t k0, uint32_t k1, uint32_t first, uint32_t* out) {
  for (uint32_t j = 0; j < kPhiloxBatch; ++j) {
    counter.v[0] = first + j;
    const PhiloxWords w = philox4x32_10(counter, k0, k1);
    for (int k = 0; k < 4; ++k) out[4 * j + k] = w.v[k];
  }
}

#if ADAQP_PHILOX_AVX512
// GCC 12's AVX-512 intrinsics warn about their own _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
static_assert(kPhiloxBatch == 32, "the AVX-512 batch is two vectors of 16 blocks");

// Both halves of the 32x32-bit products of every lane of a with m: even and odd lanes multiplied
// separately (vpmuludq), then recombined.
__attribute__((target("avx512f"))) inline void mul_hi_lo(__m512i a, __m512i m, __m512i& hi,
                                                         __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(a, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

// One round on the four words of 16 blocks.
__attribute__((target("avx512f"))) inline void round16(__m512i (&c)[4], __m512i k0, __m512i k1) {
  __m512i hi0, lo0, hi1, lo1;
  mul_hi_lo(c[0], _mm512_set1_epi64(kPhiloxM0), hi0, lo0);
  mul_hi_lo(c[2], _mm512_set1_epi64(kPhiloxM1), hi1, lo1);
  c[0] = _mm512_ternarylogic_epi32(hi1, c[1], k0, 0x96);  // three-way xor
  c[1] = lo1;
  c[2] = _mm512_ternarylogic_epi32(hi0, c[3], k1, 0x96);
  c[3] = lo0;
}

// Stores word vectors w[0..3] of 16 blocks in block order (64 words): a 4x4 transpose of words
// inside each 128-bit lane, then one of the lanes.
__attribute__((target("avx512f"))) inline void store_blocks16(const __m512i (&w)[4],
                                                              uint32_t* out) {
  const __m512i t0 = _mm512_unpacklo_epi32(w[0], w[1]), t1 = _mm512_unpackhi_epi32(w[0], w[1]);
  const __m512i t2 = _mm512_unpacklo_epi32(w[2], w[3]), t3 = _mm512_unpackhi_epi32(w[2], w[3]);
  // u_k, 128-bit lane l: the four words of block 4l + k.
  const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
  const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
  const __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
  const __m512i v2 = _mm512_shuffle_i32x4(u0, u1, 0xEE), v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
  _mm512_storeu_si512(out, _mm512_shuffle_i32x4(v0, v1, 0x88));
  _mm512_storeu_si512(out + 16, _mm512_shuffle_i32x4(v0, v1, 0xDD));
  _mm512_storeu_si512(out + 32, _mm512_shuffle_i32x4(v2, v3, 0x88));
  _mm512_storeu_si512(out + 48, _mm512_shuffle_i32x4(v2, v3, 0xDD));
}

__attribute__((target("avx512f"))) void batch_avx512(PhiloxWords counter, uint32_t k0, uint32_t k1,
                                                     uint32_t first, uint32_t* out) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i a[4], b[4];
  a[0] = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first)), lane);
  b[0] = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first + 16)), lane);
  for (int k = 1; k < 4; ++k) a[k] = b[k] = _mm512_set1_epi32(static_cast<int>(counter.v[k]));
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const __m512i key0 = _mm512_set1_epi32(static_cast<int>(k0));
    const __m512i key1 = _mm512_set1_epi32(static_cast<int>(k1));
    round16(a, key0, key1);
    round16(b, key0, key1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  store_blocks16(a, out);
  store_blocks16(b, out + 64);
}

#pragma GCC diagnostic pop

bool has_avx512() {
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f") != 0);
  return has;
}
#endif

}  // namespace

void philox_row_words(uint64_t seed, uint32_t epoch, uint32_t layer, RngStream stream, uint64_t gid,
                      int64_t blocks, uint32_t* words) {
  const PhiloxWords counter = philox_counter(epoch, layer, stream, gid, 0);
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int64_t first = 0; first < blocks; first += kPhiloxBatch) {
    uint32_t* out = words + 4 * first;
#if ADAQP_PHILOX_AVX512
    if (has_avx512()) {
      batch_avx512(counter, k0, k1, static_cast<uint32_t>(first), out);
      continue;
    }
#endif
    batch_by_block(counter, k0, k1, static_cast<uint32_t>(first), out);
  }
}

}  // namespace adaqp
