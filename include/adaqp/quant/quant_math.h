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
// own inverse. Row minima and maxima are reduced in this total order on both devices, so they pick
// the same bit pattern whatever the reduction order.
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
  float range;  // fl(M - m), what the bit-width solver needs
  bool ok;      // false when the range or the largest dequantized value m + s*L is not finite
};

ADAQP_HOST_DEVICE RowParams quant_row_params(float lo, float hi, int bits) {
  RowParams p;
  p.m = qadd(lo, 0.0f);
  p.range = qsub(hi, p.m);
  p.s = 0.0f;
  p.ok = p.range <= FLT_MAX;
  if (!p.ok || p.range == 0.0f) return p;
  const float levels = static_cast<float>(quant_levels(bits));
  p.s = qdiv(p.range, levels);
  while (p.s == 0.0f || qdiv(p.range, p.s) > levels) p.s = nextafterf(p.s, FLT_MAX);
  p.ok = qadd(p.m, qmul(p.s, levels)) <= FLT_MAX;
  return p;
}

// Elements whose rounding draws on one Philox block: 16 of its 128 bits each.
constexpr int kQuantElementsPerBlock = 8;

// The 16 random bits of element e, from word w = word (e / 2) % 4 of its block (e / 8): the low
// half of w for even e, the high half for odd e.
ADAQP_HOST_DEVICE uint32_t quant_random_bits(uint32_t w, int64_t e) {
  return (w >> (16 * (e & 1))) & 0xFFFFu;
}

// Code of x in a row with metadata (m, s), s > 0, x in [m, M]: with t = (x - m) / s in [0, L],
// q = floor(t) + [u < t - floor(t)] where u = philox_uniform16(random_bits) in [0, 1) on a 2^-16
// grid. So t <= E[q] < t + 2^-16 (a bias below 2^-16 of a step), q is in [0, L] without clamping,
// and this equals floor(t + u) of docs/design.md (section 5) without the rounding of the sum.
ADAQP_HOST_DEVICE uint32_t quant_code(float x, float m, float s, uint32_t random_bits) {
  const float t = qdiv(qsub(x, m), s);
  const int32_t whole = static_cast<int32_t>(t);  // floor, as t >= 0
  const float frac = qsub(t, static_cast<float>(whole));
  return static_cast<uint32_t>(whole) + (philox_uniform16(random_bits) < frac ? 1u : 0u);
}

// Dequantized value m + s*q (exactly m for a constant row, where s = 0).
ADAQP_HOST_DEVICE float dequant_value(float m, float s, uint32_t code) {
  return qadd(m, qmul(s, static_cast<float>(code)));
}

}  // namespace adaqp::quant
