// The per-row and per-element formulas of the stochastic quantizer (quantizer.h), shared verbatim
// by the CPU implementation (src/quant) and the CUDA kernels (cuda/block_codec.cu) so that both
// give bit-identical codes and metadata. Every float operation is a separate, correctly rounded
// IEEE operation in a fixed order: on the device the _rn intrinsics keep nvcc from fusing a
// multiply and an add, and src/quant is compiled with -ffp-contract=off for the same reason.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "adaqp/common/philox.h"

namespace adaqp::quant {

ADAQP_HOST_DEVICE float qadd(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

ADAQP_HOST_DEVICE float qsub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

ADAQP_HOST_DEVICE float qmul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

ADAQP_HOST_DEVICE float qdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Largest code of a b-bit quantizer: L = 2^b - 1.
ADAQP_HOST_DEVICE uint32_t quant_levels(int bits) {
  return (1u << bits) - 1u;
}

// A float's bit pattern mapped to an int32 of the same order (-0 below +0; NaN excluded); it is its
// own inverse. Row minima and maxima are those of this total order on both devices (the CUDA codec
// reduces these keys; the CPU's row_min_max gets the same patterns from signed and unsigned
// reductions), so they pick the same bit pattern whatever the reduction order.
ADAQP_HOST_DEVICE int32_t ordered_bits(int32_t bits) {
  return bits ^ ((bits >> 31) & 0x7FFFFFFF);
}

// The traced range of a full-precision row from its minimum and maximum (both finite): fl(M - m)
// as a quantized row's, clamped to FLT_MAX (its values travel as they are, whatever their spread).
ADAQP_HOST_DEVICE float full_precision_range(float lo, float hi) {
  const float range = qsub(hi, qadd(lo, 0.0f));
  return range <= FLT_MAX ? range : FLT_MAX;
}

// Metadata of one row, from its minimum and maximum (both finite).
struct RowParams {
  float m;      // the row minimum, -0 turned into +0 (so that m + 0*q is m, bit for bit)
  float s;      // step: 0 for a constant row, else the smallest float >= fl(range / L) whose
                // fl(range / s) <= L, so every (x - m) / s lies in [0, L] and no code is clamped
  float r;      // the encoder's scale, 256 / s as a product: fl(256 / s) lowered until
                // fl(range * r) <= 256 L, so every fl((x - m) * r) lies in [0, 256 L]; 0 where
                // 256 / s overflows (s below about 2^-120) or s = 0. Not on the wire.
  float range;  // fl(M - m), what the bit-width solver needs
  bool ok;      // false when the range or the largest dequantized value m + s*L is not finite
};

ADAQP_HOST_DEVICE RowParams quant_row_params(float lo, float hi, int bits) {
  RowParams p;
  p.m = qadd(lo, 0.0f);
  p.range = qsub(hi, p.m);
  p.s = 0.0f;
  p.r = 0.0f;
  p.ok = p.range <= FLT_MAX;
  if (!p.ok || p.range == 0.0f) return p;
  const float levels = static_cast<float>(quant_levels(bits));
  p.s = qdiv(p.range, levels);
  while (p.s == 0.0f || qdiv(p.range, p.s) > levels) p.s = nextafterf(p.s, FLT_MAX);
  p.ok = qadd(p.m, qmul(p.s, levels)) <= FLT_MAX;
  const float grid_levels = 256.0f * levels;
  p.r = qdiv(256.0f, p.s);
  if (p.r > FLT_MAX) {
    p.r = 0.0f;
  } else {
    while (qmul(p.range, p.r) > grid_levels) p.r = nextafterf(p.r, 0.0f);
  }
  return p;
}

// Elements whose rounding draws on one Philox block: 8 of its 128 bits each.
constexpr int kQuantElementsPerBlock = 16;

// The random byte of element e: byte e % 4 (low byte first) of word (e / 4) % 4 of its block
// (e / 16). Read as bytes, a row's blocks in order are its elements' random bytes in order.
ADAQP_HOST_DEVICE uint32_t quant_random_byte(const PhiloxWords& w, int64_t e) {
  return (w.v[(e / 4) % 4] >> (8 * (e % 4))) & 0xFFu;
}

// 256 t for t = (x - m) / s in [0, L], the value's place on the row's grid in 1/256 steps:
// fl((x - m) * r), or fl((x - m) / s) * 256 where r = 0. A product, because a division costs a
// vector unit several times as much (bench_quant: 10% of quantizing on AVX2); in [0, 256 L] either
// way.
ADAQP_HOST_DEVICE float quant_scaled(float x, const RowParams& p) {
  const float diff = qsub(x, p.m);
  return p.r > 0.0f ? qmul(diff, p.r) : qmul(qdiv(diff, p.s), 256.0f);
}

// Code of x in a row with metadata p (s > 0), x in [m, M]: with n = floor(quant_scaled + 1/2) (t on
// a grid of 1/256, to nearest) and k the element's random byte, q = floor((n + k) / 256). So
// E[q] = n / 256 lies within 1/512 of the computed 256 t / 256 (which differs from t by float
// rounding only: a few ulps of 256 L), q is in [0, L] without clamping (n <= 256 L), and a value
// on the grid (t an integer, up to that rounding) comes back exactly.
ADAQP_HOST_DEVICE uint32_t quant_code(float x, const RowParams& p, uint32_t random_byte) {
  const auto n = static_cast<uint32_t>(qadd(quant_scaled(x, p), 0.5f));  // floor, as it is >= 0
  return (n + random_byte) >> 8;
}

// The packed codes of block `blk` of a row of d values (elements 16 blk .. 16 blk + 15, those
// below d) with metadata p, from the block's Philox words w: 16 codes of B bits are exactly 2B
// whole bytes of the packed row (quantizer.h), written to out[2B blk ..] up to the row's end. All
// zero for a constant row (s = 0), whatever w. The CUDA codec's per-lane step, and the CPU's
// wherever its vector path does not reach.
template <int B>
ADAQP_HOST_DEVICE void quant_pack_block(const float* x, int64_t d, const RowParams& p,
                                        const PhiloxWords& w, int64_t blk, uint8_t* out) {
  const int64_t row_bytes = (d * B + 7) / 8;
  for (int j = 0; j < 4; ++j) {
    const int64_t first = kQuantElementsPerBlock * blk + 4 * j;  // word j rounds 4 elements
    if (first >= d) return;
    uint32_t codes = 0;  // the B bits of element first + i at bit i B
    for (int i = 0; i < 4 && first + i < d; ++i) {
      if (p.s > 0.0f)
        codes |= quant_code(x[first + i], p, quant_random_byte(w, first + i)) << (i * B);
    }
    for (int k = 0; k < B / 2 && first * B / 8 + k < row_bytes; ++k)
      out[first * B / 8 + k] = static_cast<uint8_t>(codes >> (8 * k));
  }
}

// Dequantized value m + s*q (exactly m for a constant row, where s = 0).
ADAQP_HOST_DEVICE float dequant_value(float m, float s, uint32_t code) {
  return qadd(m, qmul(s, static_cast<float>(code)));
}

}  // namespace adaqp::quant
