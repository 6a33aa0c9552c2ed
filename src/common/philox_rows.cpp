#include "adaqp/common/philox_rows.h"

#include <algorithm>

#include "adaqp/common/cpu_features.h"
#include "adaqp/common/error.h"

#if ADAQP_X86_PATHS
#include <immintrin.h>
#endif

namespace adaqp {
namespace {

// Blocks first .. first + count - 1 one by one: the reference every faster path equals.
void batch_by_block(PhiloxWords counter, uint32_t k0, uint32_t k1, uint32_t first, int64_t count,
                    uint32_t* out) {
  for (uint32_t j = 0; j < count; ++j) {
    counter.v[0] = first + j;
    const PhiloxWords w = philox4x32_10(counter, k0, k1);
    for (int k = 0; k < 4; ++k) out[4 * j + k] = w.v[k];
  }
}

#if ADAQP_X86_PATHS
// GCC 12's AVX-512 intrinsics warn about their own _mm512_undefined_* (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
static_assert(kPhiloxBatch == 32, "the AVX-512 batch is two vectors of 16 blocks");

// Both halves of the 32x32-bit products of every lane of a with m: even and odd lanes multiplied
// separately (vpmuludq), then recombined by masked dword shuffles, each a shuffle and a blend in
// one. On a Zen 4 that took 16 blocks in 28.5 ns, 32 in 45 ns, against 35.4 and 57.5 with the
// 64-bit shifts and blends it replaces.
__attribute__((target("avx512f"))) inline void mul_hi_lo(__m512i a, __m512i m, __m512i& hi,
                                                         __m512i& lo) {
  constexpr auto kOddDown = static_cast<_MM_PERM_ENUM>(0xF5);  // dwords (1, 1, 3, 3)
  constexpr auto kEvenUp = static_cast<_MM_PERM_ENUM>(0xA0);   // dwords (0, 0, 2, 2)
  const __m512i even = _mm512_mul_epu32(a, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_shuffle_epi32(a, kOddDown), m);
  lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, kEvenUp);
  hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, kOddDown);
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

// V interleaved vectors of 16 blocks (V = 2: a whole batch; 1: its first half).
template <int V>
__attribute__((target("avx512f"))) void batch_avx512(PhiloxWords counter, uint32_t k0, uint32_t k1,
                                                     uint32_t first, uint32_t* out) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i c[V][4];
  for (int v = 0; v < V; ++v) {
    c[v][0] = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first + 16 * v)), lane);
    for (int k = 1; k < 4; ++k) c[v][k] = _mm512_set1_epi32(static_cast<int>(counter.v[k]));
  }
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const __m512i key0 = _mm512_set1_epi32(static_cast<int>(k0));
    const __m512i key1 = _mm512_set1_epi32(static_cast<int>(k1));
    for (int v = 0; v < V; ++v) round16(c[v], key0, key1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  for (int v = 0; v < V; ++v) store_blocks16(c[v], out + 64 * v);
}

#pragma GCC diagnostic pop

// AVX2 (no AVX-512: many EPYCs before Zen 4): four interleaved vectors of 8 blocks, the same steps
// with the shuffles and blends apart (AVX2 has no masks). 64-bit shifts in place of the shuffles
// had held the rounds back on a Zen 2: 16 blocks in 64.8 ns instead of 50.4, 32 in 141.8 for 96.7.
__attribute__((target("avx2"))) inline void mul_hi_lo8(__m256i a, __m256i m, __m256i& hi,
                                                       __m256i& lo) {
  constexpr int kOddDown = 0xF5, kEvenUp = 0xA0;  // dwords (1, 1, 3, 3) and (0, 0, 2, 2)
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_shuffle_epi32(a, kOddDown), m);
  lo = _mm256_blend_epi32(even, _mm256_shuffle_epi32(odd, kEvenUp), 0xAA);
  hi = _mm256_blend_epi32(_mm256_shuffle_epi32(even, kOddDown), odd, 0xAA);
}

__attribute__((target("avx2"))) inline void round8(__m256i (&c)[4], __m256i k0, __m256i k1) {
  __m256i hi0, lo0, hi1, lo1;
  mul_hi_lo8(c[0], _mm256_set1_epi64x(kPhiloxM0), hi0, lo0);
  mul_hi_lo8(c[2], _mm256_set1_epi64x(kPhiloxM1), hi1, lo1);
  c[0] = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), k0);
  c[1] = lo1;
  c[2] = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), k1);
  c[3] = lo0;
}

// Stores word vectors w[0..3] of 8 blocks in block order (32 words): a 4x4 transpose inside each
// 128-bit lane (blocks 0-3 in the low lanes, 4-7 in the high ones), then the lanes in order.
__attribute__((target("avx2"))) inline void store_blocks8(const __m256i (&w)[4], uint32_t* out) {
  const __m256i t0 = _mm256_unpacklo_epi32(w[0], w[1]), t1 = _mm256_unpackhi_epi32(w[0], w[1]);
  const __m256i t2 = _mm256_unpacklo_epi32(w[2], w[3]), t3 = _mm256_unpackhi_epi32(w[2], w[3]);
  // u_k: the four words of block k (low lane) and of block 4 + k (high lane).
  const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
  const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
  auto* v = reinterpret_cast<__m256i*>(out);
  _mm256_storeu_si256(v, _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_storeu_si256(v + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_storeu_si256(v + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_storeu_si256(v + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}

// Every round on V interleaved vectors of 8 blocks.
template <int V>
__attribute__((target("avx2"))) inline void rounds8(__m256i (&c)[V][4], uint32_t k0, uint32_t k1) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const __m256i key0 = _mm256_set1_epi32(static_cast<int>(k0));
    const __m256i key1 = _mm256_set1_epi32(static_cast<int>(k1));
    for (int v = 0; v < V; ++v) round8(c[v], key0, key1);
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
}

// V interleaved vectors of 8 blocks (V = 4: a whole batch; fewer: its first 8 V blocks).
template <int V>
__attribute__((target("avx2"))) void batch_avx2(PhiloxWords counter, uint32_t k0, uint32_t k1,
                                                uint32_t first, uint32_t* out) {
  static_assert(kPhiloxBatch == 32, "the AVX2 batch is four vectors of 8 blocks");
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i c[V][4];
  for (int v = 0; v < V; ++v) {
    c[v][0] = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(first + 8 * v)), lane);
    for (int k = 1; k < 4; ++k) c[v][k] = _mm256_set1_epi32(static_cast<int>(counter.v[k]));
  }
  rounds8<V>(c, k0, k1);
  for (int v = 0; v < V; ++v) store_blocks8(c[v], out + 32 * v);
}

// Blocks of scattered counters (words 0 to 2 per lane, word 3 shared), one picked word of each.
__attribute__((target("avx2"))) void picked_avx2(const uint32_t (&ctr)[3][kPhiloxBatch],
                                                 uint32_t ctr3, uint32_t k0, uint32_t k1,
                                                 const uint32_t* pick, uint32_t* out) {
  __m256i c[4][4];
  for (int v = 0; v < 4; ++v) {
    for (int k = 0; k < 3; ++k)
      c[v][k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ctr[k] + 8 * v));
    c[v][3] = _mm256_set1_epi32(static_cast<int>(ctr3));
  }
  rounds8<4>(c, k0, k1);
  for (int v = 0; v < 4; ++v) {
    const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pick + 8 * v));
    __m256i w = c[v][0];
    for (int k = 1; k < 4; ++k)
      w = _mm256_blendv_epi8(w, c[v][k], _mm256_cmpeq_epi32(p, _mm256_set1_epi32(k)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * v), w);
  }
}

#endif

}  // namespace

void philox_row_words(uint64_t seed, uint32_t epoch, uint32_t layer, RngStream stream, uint64_t gid,
                      int64_t blocks, uint32_t* words) {
  const PhiloxWords counter = philox_counter(epoch, layer, stream, gid, 0);
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int64_t first = 0; first < blocks; first += kPhiloxBatch) {
    uint32_t* out = words + 4 * first;
    const auto at = static_cast<uint32_t>(first);
    const int64_t count = std::min(blocks - first, kPhiloxBatch);  // a short row: no whole batch
#if ADAQP_X86_PATHS
    const CpuIsa isa = cpu_isa();
    if (isa == CpuIsa::kAvx512) {
      if (count > 16) {
        batch_avx512<2>(counter, k0, k1, at, out);
      } else {
        batch_avx512<1>(counter, k0, k1, at, out);
      }
      continue;
    }
    if (isa == CpuIsa::kAvx2) {
      switch ((count + 7) / 8) {
        case 1:
          batch_avx2<1>(counter, k0, k1, at, out);
          break;
        case 2:
          batch_avx2<2>(counter, k0, k1, at, out);
          break;
        case 3:
          batch_avx2<3>(counter, k0, k1, at, out);
          break;
        default:
          batch_avx2<4>(counter, k0, k1, at, out);
      }
      continue;
    }
#endif
    batch_by_block(counter, k0, k1, at, count, out);
  }
}

void philox_picked_words(uint64_t seed, uint32_t epoch, uint32_t layer, RngStream stream,
                         const uint64_t* gids, const uint32_t* blocks, const uint32_t* pick,
                         int64_t n, uint32_t* out) {
  ADAQP_CHECK(n >= 0 && n <= kPhiloxBatch, "philox_picked_words: at most a batch of blocks");
  const auto k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
#if ADAQP_X86_PATHS
  if (cpu_isa() >= CpuIsa::kAvx2) {
    uint32_t ctr[3][kPhiloxBatch] = {}, picked[kPhiloxBatch] = {}, words[kPhiloxBatch];
    for (int64_t j = 0; j < n; ++j) {
      const PhiloxWords c = philox_counter(epoch, layer, stream, gids[j], blocks[j]);
      for (int k = 0; k < 3; ++k) ctr[k][j] = c.v[k];
      picked[j] = pick[j];
    }
    // Word 3 (the epoch) is the same in every node's counter.
    picked_avx2(ctr, philox_counter(epoch, layer, stream, 0, 0).v[3], k0, k1, picked, words);
    for (int64_t j = 0; j < n; ++j) out[j] = words[j];
    return;
  }
#endif
  for (int64_t j = 0; j < n; ++j)
    out[j] =
        philox4x32_10(philox_counter(epoch, layer, stream, gids[j], blocks[j]), k0, k1).v[pick[j]];
}

}  // namespace adaqp
