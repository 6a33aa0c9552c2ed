// The CUDA twin of the CPU block codec (src/quant/block_codec.cpp over src/quant/quantizer.cpp):
// one warp quantizes or dequantizes (or, at full precision, copies) one row of a peer's block,
// placing itself by its slot (quant/block_codec.h), bit-identical to the CPU codec.
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

// One warp per row. Quantizing, lane l handles the 16-element blocks l, l + 32, ... (one Philox
// block each, quant_math.h quant_pack_block): 16 codes of B bits are exactly 2B whole bytes of the
// packed row.
// Dequantizing, it handles 4-element blocks: B/2 whole bytes. Either way no two lanes write the
// same byte.
constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

dim3 launch_grid(int64_t n) {
  return dim3(cuda::grid_blocks(n, kRowsPerBlock));
}

// The minimum and maximum of row x on every lane of the warp (each lane reads its elements, then
// the warp reduces in the order-preserving integer keys of quant_math.h, so the bit patterns are
// the CPU's whatever the order); false (on every lane) if the row holds a NaN or an infinity.
__device__ bool row_min_max(const float* __restrict__ x, int64_t d, float& lo, float& hi) {
  int32_t key_lo = INT_MAX, key_hi = INT_MIN;
  unsigned special = 0;
  for (int64_t e = threadIdx.x; e < d; e += kWarp) {
    const int32_t bits = __float_as_int(x[e]);
    const int32_t k = ordered_bits(bits);
    key_lo = min(key_lo, k);
    key_hi = max(key_hi, k);
    special |= (bits & 0x7F800000) == 0x7F800000 ? 1u : 0u;
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    key_lo = min(key_lo, __shfl_xor_sync(kFullMask, key_lo, offset));
    key_hi = max(key_hi, __shfl_xor_sync(kFullMask, key_hi, offset));
    special |= __shfl_xor_sync(kFullMask, special, offset);
  }
  lo = __int_as_float(ordered_bits(key_lo));
  hi = __int_as_float(ordered_bits(key_hi));
  return special == 0;
}

// Quantizes row x into `out` (its packed codes) and meta[0..1] (m, s), and *range when not null.
// Every lane of the warp calls it for the same row. False (on every lane) when the row cannot be
// quantized; nothing is written then.
template <int B>
__device__ bool quantize_row(const float* __restrict__ x, int64_t d, uint64_t gid,
                             const QuantKey& key, uint8_t* __restrict__ out,
                             float* __restrict__ meta, float* __restrict__ range) {
  const int lane = threadIdx.x;
  const int64_t blocks = (d + kQuantElementsPerBlock - 1) / kQuantElementsPerBlock;
  float lo = 0.0f, hi = 0.0f;
  if (!row_min_max(x, d, lo, hi)) return false;
  const RowParams p = quant_row_params(lo, hi, B);
  if (!p.ok) return false;
  if (lane == 0) {
    meta[0] = p.m;
    meta[1] = p.s;
    if (range != nullptr) *range = p.range;
  }
  for (int64_t blk = lane; blk < blocks; blk += kWarp) {
    PhiloxWords w{};  // a constant row's codes are zero whatever w
    if (p.s > 0.0f)
      w = philox_block(key.seed, key.epoch, key.layer, key.stream, gid, static_cast<uint32_t>(blk));
    quant_pack_block<B>(x, d, p, w, blk, out);
  }
  return true;
}

// y = the dequantized row; every lane of the warp calls it for the same row.
template <int B>
__device__ void dequantize_row(const uint8_t* __restrict__ in, float m, float s, int64_t d,
                               float* __restrict__ y) {
  constexpr uint32_t kMask = (1u << B) - 1u;
  const int64_t row_bytes = packed_row_bytes(d, B);
  const int64_t blocks = (d + 3) / 4;
  for (int64_t blk = threadIdx.x; blk < blocks; blk += kWarp) {
    const int64_t first = blk * B / 2;
    uint32_t codes = 0;
    for (int k = 0; k < B / 2 && first + k < row_bytes; ++k)
      codes |= static_cast<uint32_t>(in[first + k]) << (8 * k);
    for (int j = 0; j < 4 && 4 * blk + j < d; ++j)
      y[4 * blk + j] = dequant_value(m, s, (codes >> (j * B)) & kMask);
  }
}

// Copies a full-precision row x into `out` (the block's full-precision rows start where the
// block does, so `out` is float-aligned) and writes *range when not null. False (on every lane)
// when the row holds a NaN or an infinity; nothing is written then.
__device__ bool copy_row(const float* __restrict__ x, int64_t d, float* __restrict__ out,
                         float* __restrict__ range) {
  float lo = 0.0f, hi = 0.0f;
  if (!row_min_max(x, d, lo, hi)) return false;
  for (int64_t e = threadIdx.x; e < d; e += kWarp) out[e] = x[e];
  if (threadIdx.x == 0 && range != nullptr) *range = full_precision_range(lo, hi);
  return true;
}

// Calls f(std::integral_constant<int, B>) for the row's codec width B (a width of widths.h; the
// block was laid out by block_slots, which refuses any other).
template <typename F>
__device__ auto dispatch_width(int bits, F&& f) {
  if (bits == 2) return f(std::integral_constant<int, 2>{});
  if (bits == 4) return f(std::integral_constant<int, 4>{});
  return f(std::integral_constant<int, 8>{});
}

// Grid-stride loop of warps over rows.
#define ADAQP_FOR_EACH_ROW(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * kRowsPerBlock)

__global__ void encode_block_kernel(const uint8_t* __restrict__ bits,
                                    const int32_t* __restrict__ slot, BlockCounts counts,
                                    const float* __restrict__ src, int64_t d,
                                    const int64_t* __restrict__ src_rows,
                                    const int64_t* __restrict__ gids, QuantKey key,
                                    uint8_t* __restrict__ out, float* __restrict__ ranges,
                                    unsigned long long* status, int64_t n) {
  ADAQP_FOR_EACH_ROW(i, n) {
    const int b = bits[i];
    const RowPlace at = row_place(b, slot[i], counts, d);
    const float* x = src + (src_rows == nullptr ? i : src_rows[i]) * d;
    const auto gid = static_cast<uint64_t>(gids[i]);
    auto* meta = reinterpret_cast<float*>(out + at.meta);
    float* range = ranges != nullptr ? ranges + i : nullptr;
    const bool ok =
        b == kFullPrecisionBits
            ? copy_row(x, d, reinterpret_cast<float*>(out + at.code), range)
            : dispatch_width(b, [&](auto w) {
                return quantize_row<decltype(w)::value>(x, d, gid, key, out + at.code, meta, range);
              });
    if (!ok && threadIdx.x == 0) atomicMin(status, static_cast<unsigned long long>(gid));
  }
}

__global__ void decode_block_kernel(const uint8_t* __restrict__ bits,
                                    const int32_t* __restrict__ slot, BlockCounts counts,
                                    const uint8_t* __restrict__ in, int64_t d,
                                    float* __restrict__ dst, int64_t n) {
  ADAQP_FOR_EACH_ROW(i, n) {
    const int b = bits[i];
    const RowPlace at = row_place(b, slot[i], counts, d);
    if (b == kFullPrecisionBits) {
      const auto* x = reinterpret_cast<const float*>(in + at.code);
      for (int64_t e = threadIdx.x; e < d; e += kWarp) dst[i * d + e] = x[e];
      continue;
    }
    const auto* meta = reinterpret_cast<const float*>(in + at.meta);
    dispatch_width(b, [&](auto w) {
      dequantize_row<decltype(w)::value>(in + at.code, meta[0], meta[1], d, dst + i * d);
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
  encode_block_kernel<<<launch_grid(n), dim3(kWarp, kRowsPerBlock), 0,
                        static_cast<cudaStream_t>(stream)>>>(bits, slot, counts, src, d, src_rows,
                                                             gids, key, out, ranges, status, n);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void decode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const uint8_t* in, int64_t d, float* dst, void* stream) {
  const int64_t n = block_rows(counts);
  check_args(d, n);
  if (n == 0) return;
  decode_block_kernel<<<launch_grid(n), dim3(kWarp, kRowsPerBlock), 0,
                        static_cast<cudaStream_t>(stream)>>>(bits, slot, counts, in, d, dst, n);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adaqp::quant
