// The CUDA twin of the CPU block codec (src/quant/block_codec.cpp over src/quant/quantizer.cpp),
// bit-identical to it. Encoding, a group of G lanes of a warp quantizes (or, at full precision,
// copies) one row of a peer's block, placing it by its slot (quant/block_codec.h); decoding, each
// thread dequantizes (or copies) 4 elements of a row.
#include <cuda_runtime.h>

#include <climits>
#include <string>
#include <type_traits>

#include "adaqp/kernels/cuda_support.h"
#include "adaqp/quant/block_codec.h"
#include "adaqp/quant/quant_math.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp::quant {
namespace {

// Encoding, a row's G lanes handle its 16-element blocks g, g + G, ... (one Philox block each,
// quant_math.h quant_pack_block): 16 codes of B bits are exactly 2B whole bytes of the packed row.
// G is the smallest power of two that covers the row's blocks, at most a warp: one lane a row at
// d <= 16, 16 lanes (two rows a warp) at d = 256; a warp a row idled half its lanes there and all
// but 3 at d = 47 (the H200's codec: 0.007 s of AdaQP's 0.083 s of compute at W=2, 2026-12-04).
// Decoding, a thread handles one 4-element group of a row: B/2 whole bytes. Either way no two
// threads write the same byte.
constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kDecodeThreads = 256;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

ADAQP_HOST_DEVICE int64_t quant_blocks(int64_t d) {
  return (d + kQuantElementsPerBlock - 1) / kQuantElementsPerBlock;
}

// Calls f(std::integral_constant<int, G>) for the lanes a row of width d gets.
template <typename F>
void dispatch_lanes(int64_t d, F&& f) {
  const int64_t blocks = quant_blocks(d);
  if (blocks <= 1) return f(std::integral_constant<int, 1>{});
  if (blocks <= 2) return f(std::integral_constant<int, 2>{});
  if (blocks <= 4) return f(std::integral_constant<int, 4>{});
  if (blocks <= 8) return f(std::integral_constant<int, 8>{});
  if (blocks <= 16) return f(std::integral_constant<int, 16>{});
  return f(std::integral_constant<int, kWarp>{});
}

// The minimum and maximum of row x (d values) on each of its G lanes (lane = its place among
// them): each lane reads its elements, then the lanes reduce in the order-preserving integer keys
// of quant_math.h, so the bit patterns are the CPU's whatever the order; false (on every lane of
// the row) if the row holds a NaN or an infinity. Every lane of the warp calls it (the shuffles
// name all 32): a lane of no row passes d = 0. XOR offsets below G keep each row's lanes among
// themselves.
template <int G>
__device__ bool row_min_max(const float* __restrict__ x, int64_t d, int lane, float& lo,
                            float& hi) {
  int32_t key_lo = INT_MAX, key_hi = INT_MIN;
  unsigned special = 0;
  for (int64_t e = lane; e < d; e += G) {
    const int32_t bits = __float_as_int(x[e]);
    const int32_t k = ordered_bits(bits);
    key_lo = min(key_lo, k);
    key_hi = max(key_hi, k);
    special |= (bits & 0x7F800000) == 0x7F800000 ? 1u : 0u;
  }
#pragma unroll
  for (int offset = G / 2; offset > 0; offset /= 2) {
    key_lo = min(key_lo, __shfl_xor_sync(kFullMask, key_lo, offset));
    key_hi = max(key_hi, __shfl_xor_sync(kFullMask, key_hi, offset));
    special |= __shfl_xor_sync(kFullMask, special, offset);
  }
  lo = __int_as_float(ordered_bits(key_lo));
  hi = __int_as_float(ordered_bits(key_hi));
  return special == 0;
}

// Quantizes row x, of minimum lo and maximum hi, into `out` (its packed codes) and meta[0..1]
// (m, s), and *range when not null. The row's G lanes call it. False (on every lane of the row)
// when the row cannot be quantized; nothing is written then.
template <int B, int G>
__device__ bool quantize_row(const float* __restrict__ x, int64_t d, int lane, float lo, float hi,
                             uint64_t gid, const QuantKey& key, uint8_t* __restrict__ out,
                             float* __restrict__ meta, float* __restrict__ range) {
  const RowParams p = quant_row_params(lo, hi, B);
  if (!p.ok) return false;
  if (lane == 0) {
    meta[0] = p.m;
    meta[1] = p.s;
    if (range != nullptr) *range = p.range;
  }
  const int64_t blocks = quant_blocks(d);
  for (int64_t blk = lane; blk < blocks; blk += G) {
    PhiloxWords w{};  // a constant row's codes are zero whatever w
    if (p.s > 0.0f)
      w = philox_block(key.seed, key.epoch, key.layer, key.stream, gid, static_cast<uint32_t>(blk));
    quant_pack_block<B>(x, d, p, w, blk, out);
  }
  return true;
}

// Copies a full-precision row x, of minimum lo and maximum hi, into `out` (the block's
// full-precision rows start where the block does, so `out` is float-aligned) and writes *range
// when not null. The row's G lanes call it.
template <int G>
__device__ void copy_row(const float* __restrict__ x, int64_t d, int lane, float lo, float hi,
                         float* __restrict__ out, float* __restrict__ range) {
  for (int64_t e = lane; e < d; e += G) out[e] = x[e];
  if (lane == 0 && range != nullptr) *range = full_precision_range(lo, hi);
}

// Calls f(std::integral_constant<int, B>) for the row's codec width B (a width of widths.h; the
// block was laid out by block_slots, which refuses any other).
template <typename F>
__device__ auto dispatch_width(int bits, F&& f) {
  if (bits == 2) return f(std::integral_constant<int, 2>{});
  if (bits == 4) return f(std::integral_constant<int, 4>{});
  return f(std::integral_constant<int, 8>{});
}

// Rows of a grid-stride launch: a block's warps take kWarp / G rows each. Every lane runs the same
// iterations (the loop's bounds are the block's), so all 32 reach each shuffle.
template <int G>
__global__ void encode_block_kernel(const uint8_t* __restrict__ bits,
                                    const int32_t* __restrict__ slot, BlockCounts counts,
                                    const float* __restrict__ src, int64_t d,
                                    const int64_t* __restrict__ src_rows,
                                    const int64_t* __restrict__ gids, QuantKey key,
                                    uint8_t* __restrict__ out, float* __restrict__ ranges,
                                    unsigned long long* status, int64_t n) {
  constexpr int64_t kRowsPerWarp = kWarp / G;
  constexpr int64_t kRowsPerBlock = kRowsPerWarp * kWarpsPerBlock;
  const int lane = static_cast<int>(threadIdx.x) % G;
  const int64_t place = threadIdx.y * kRowsPerWarp + threadIdx.x / G;
  for (int64_t first = blockIdx.x * kRowsPerBlock; first < n;
       first += static_cast<int64_t>(gridDim.x) * kRowsPerBlock) {
    const int64_t i = first + place;
    const bool live = i < n;
    const float* x = live ? src + (src_rows == nullptr ? i : src_rows[i]) * d : nullptr;
    float lo = 0.0f, hi = 0.0f;
    const bool finite = row_min_max<G>(x, live ? d : 0, lane, lo, hi);
    if (!live) continue;
    const int b = bits[i];
    const RowPlace at = row_place(b, slot[i], counts, d);
    const auto gid = static_cast<uint64_t>(gids[i]);
    float* range = ranges != nullptr ? ranges + i : nullptr;
    bool ok = finite;
    if (ok && b == kFullPrecisionBits) {
      copy_row<G>(x, d, lane, lo, hi, reinterpret_cast<float*>(out + at.code), range);
    } else if (ok) {
      auto* meta = reinterpret_cast<float*>(out + at.meta);
      ok = dispatch_width(b, [&](auto w) {
        return quantize_row<decltype(w)::value, G>(x, d, lane, lo, hi, gid, key, out + at.code,
                                                   meta, range);
      });
    }
    if (!ok && lane == 0) atomicMin(status, static_cast<unsigned long long>(gid));
  }
}

// y[4 g ..] = the dequantized elements of 4-element group g of a row (its codes in `in`).
template <int B>
__device__ void dequantize_group(const uint8_t* __restrict__ in, float m, float s, int64_t d,
                                 int64_t g, float* __restrict__ y) {
  constexpr uint32_t kMask = (1u << B) - 1u;
  const int64_t row_bytes = packed_row_bytes(d, B);
  const int64_t first = g * B / 2;
  uint32_t codes = 0;
  for (int k = 0; k < B / 2 && first + k < row_bytes; ++k)
    codes |= static_cast<uint32_t>(in[first + k]) << (8 * k);
  for (int j = 0; j < 4 && 4 * g + j < d; ++j)
    y[4 * g + j] = dequant_value(m, s, (codes >> (j * B)) & kMask);
}

// A thread a 4-element group of a row: consecutive threads write consecutive 16 bytes of a row.
__global__ void decode_block_kernel(const uint8_t* __restrict__ bits,
                                    const int32_t* __restrict__ slot, BlockCounts counts,
                                    const uint8_t* __restrict__ in, int64_t d,
                                    float* __restrict__ dst, int64_t n) {
  const int64_t groups = (d + 3) / 4;
  const int64_t items = n * groups;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < items;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t / groups, g = t - i * groups;
    const int b = bits[i];
    const RowPlace at = row_place(b, slot[i], counts, d);
    float* y = dst + i * d;
    if (b == kFullPrecisionBits) {
      const auto* x = reinterpret_cast<const float*>(in + at.code);
      for (int j = 0; j < 4 && 4 * g + j < d; ++j) y[4 * g + j] = x[4 * g + j];
      continue;
    }
    const auto* meta = reinterpret_cast<const float*>(in + at.meta);
    dispatch_width(b, [&](auto w) {
      dequantize_group<decltype(w)::value>(in + at.code, meta[0], meta[1], d, g, y);
    });
  }
}

void check_args(int64_t d, int64_t n) {
  ADAQP_CHECK(d > 0 && n >= 0, "row width " + std::to_string(d) + ", rows " + std::to_string(n));
}

int64_t block_rows(const BlockCounts& c) {
  int64_t n = 0;
  for (int k = 0; k < kNumMessageWidths; ++k) n += c.rows[k];
  return n;
}

}  // namespace

void encode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const float* src, int64_t d, const int64_t* src_rows, const int64_t* gids,
                       const QuantKey& key, uint8_t* out, float* ranges, unsigned long long* status,
                       void* stream) {
  const int64_t n = block_rows(counts);
  check_args(d, n);
  if (n == 0) return;
  dispatch_lanes(d, [&](auto lanes) {
    constexpr int G = decltype(lanes)::value;
    encode_block_kernel<G><<<cuda::grid_blocks(n, (kWarp / G) * kWarpsPerBlock),
                             dim3(kWarp, kWarpsPerBlock), 0, static_cast<cudaStream_t>(stream)>>>(
        bits, slot, counts, src, d, src_rows, gids, key, out, ranges, status, n);
  });
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void decode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const uint8_t* in, int64_t d, float* dst, void* stream) {
  const int64_t n = block_rows(counts);
  check_args(d, n);
  if (n == 0) return;
  decode_block_kernel<<<cuda::grid_blocks(n * ((d + 3) / 4), kDecodeThreads), kDecodeThreads, 0,
                        static_cast<cudaStream_t>(stream)>>>(bits, slot, counts, in, d, dst, n);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adaqp::quant
