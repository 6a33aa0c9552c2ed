#include <cuda_runtime.h>

#include <climits>
#include <string>
#include <vector>

#include "adaqp/quant/block_codec.h"
#include "adaqp/quant/quant_math.h"
#include "adaqp/quant/quantizer.h"
#include "check.cuh"

namespace adaqp::quant {
namespace {

// One warp per row; lane l handles the 4-element blocks l, l + 32, ... A block of 4 codes of B bits
// is exactly B/2 whole bytes of the packed row, so no two lanes write the same byte.
constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

dim3 launch_grid(int64_t n) {
  const int64_t blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  return dim3(static_cast<unsigned>(blocks < 65535 ? blocks : 65535));
}

// Quantizes row x into `out` (its packed codes) and meta[0..1] (m, s), and *range when not null.
// Every lane of the warp calls it for the same row. False (on every lane) when the row cannot be
// quantized; nothing is written then.
template <int B>
__device__ bool quantize_row(const float* __restrict__ x, int64_t d, uint64_t gid,
                             const QuantKey& key, uint8_t* __restrict__ out,
                             float* __restrict__ meta, float* __restrict__ range) {
  const int lane = threadIdx.x;
  const int64_t row_bytes = packed_row_bytes(d, B);
  const int64_t blocks = (d + 3) / 4;
  int32_t key_lo = INT_MAX, key_hi = INT_MIN;
  unsigned special = 0;
  for (int64_t e = lane; e < d; e += kWarp) {
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
  const RowParams p = quant_row_params(__int_as_float(ordered_bits(key_lo)),
                                       __int_as_float(ordered_bits(key_hi)), B);
  if (special != 0 || !p.ok) return false;
  if (lane == 0) {
    meta[0] = p.m;
    meta[1] = p.s;
    if (range != nullptr) *range = p.range;
  }
  for (int64_t blk = lane; blk < blocks; blk += kWarp) {
    uint32_t codes = 0;  // code j of the block at bits j*B
    if (p.s > 0.0f) {
      const PhiloxWords w =
          philox_block(key.seed, key.epoch, key.layer, key.stream, gid, static_cast<uint32_t>(blk));
      for (int j = 0; j < 4 && 4 * blk + j < d; ++j)
        codes |= quant_code(x[4 * blk + j], p.m, p.s, w.v[j]) << (j * B);
    }
    const int64_t first = blk * B / 2;
    for (int k = 0; k < B / 2 && first + k < row_bytes; ++k)
      out[first + k] = static_cast<uint8_t>(codes >> (8 * k));
  }
  return true;
}

// y = the dequantized row (y += it when kAdd); every lane of the warp calls it for the same row.
template <int B, bool kAdd>
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
    for (int j = 0; j < 4 && 4 * blk + j < d; ++j) {
      const float v = dequant_value(m, s, (codes >> (j * B)) & kMask);
      y[4 * blk + j] = kAdd ? qadd(y[4 * blk + j], v) : v;
    }
  }
}

// Grid-stride loop of warps over rows.
#define ADAQP_FOR_EACH_ROW(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * kRowsPerBlock)

template <int B>
__global__ void quantize_kernel(const float* __restrict__ src, int64_t d,
                                const int64_t* __restrict__ row_index,
                                const int64_t* __restrict__ gids, int64_t n, QuantKey key,
                                uint8_t* __restrict__ packed, float* __restrict__ meta,
                                float* __restrict__ ranges, unsigned long long* status) {
  ADAQP_FOR_EACH_ROW(i, n) {
    const float* x = src + (row_index == nullptr ? i : row_index[i]) * d;
    const bool ok = quantize_row<B>(x, d, static_cast<uint64_t>(gids[i]), key,
                                    packed + i * packed_row_bytes(d, B), meta + 2 * i,
                                    ranges != nullptr ? ranges + i : nullptr);
    if (!ok && threadIdx.x == 0) atomicMax(status, static_cast<unsigned long long>(n - i));
  }
}

// Dequantizes row i into dst[row_index[i]] (dst[i] when row_index is null), adding when kAdd.
template <int B, bool kAdd>
__global__ void dequantize_kernel(const uint8_t* __restrict__ packed,
                                  const float* __restrict__ meta, int64_t n, int64_t d,
                                  const int64_t* __restrict__ row_index, float* __restrict__ dst) {
  ADAQP_FOR_EACH_ROW(i, n) {
    dequantize_row<B, kAdd>(packed + i * packed_row_bytes(d, B), meta[2 * i], meta[2 * i + 1], d,
                            dst + (row_index == nullptr ? i : row_index[i]) * d);
  }
}

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
    bool ok;
    if (b == 2) {
      ok = quantize_row<2>(x, d, gid, key, out + at.code, meta, range);
    } else if (b == 4) {
      ok = quantize_row<4>(x, d, gid, key, out + at.code, meta, range);
    } else {
      ok = quantize_row<8>(x, d, gid, key, out + at.code, meta, range);
    }
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
    const auto* meta = reinterpret_cast<const float*>(in + at.meta);
    if (b == 2) {
      dequantize_row<2, false>(in + at.code, meta[0], meta[1], d, dst + i * d);
    } else if (b == 4) {
      dequantize_row<4, false>(in + at.code, meta[0], meta[1], d, dst + i * d);
    } else {
      dequantize_row<8, false>(in + at.code, meta[0], meta[1], d, dst + i * d);
    }
  }
}

void check_args(int64_t d, int64_t n, int bits) {
  ADAQP_CHECK(d > 0 && n >= 0, "row width " + std::to_string(d) + ", rows " + std::to_string(n));
  ADAQP_CHECK(valid_bits(bits), "bit-width " + std::to_string(bits) + " is not 2, 4 or 8");
}

template <bool kAdd>
void launch_dequantize(const uint8_t* packed, const float* meta, int64_t n, int64_t d, int bits,
                       const int64_t* row_index, float* dst, void* stream) {
  check_args(d, n, bits);
  if (n == 0) return;
  const dim3 block(kWarp, kRowsPerBlock);
  const auto s = static_cast<cudaStream_t>(stream);
  switch (bits) {
    case 2:
      dequantize_kernel<2, kAdd>
          <<<launch_grid(n), block, 0, s>>>(packed, meta, n, d, row_index, dst);
      break;
    case 4:
      dequantize_kernel<4, kAdd>
          <<<launch_grid(n), block, 0, s>>>(packed, meta, n, d, row_index, dst);
      break;
    default:
      dequantize_kernel<8, kAdd>
          <<<launch_grid(n), block, 0, s>>>(packed, meta, n, d, row_index, dst);
  }
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

int64_t block_rows(const BlockCounts& c) {
  return c.rows[0] + c.rows[1] + c.rows[2];
}

}  // namespace

void quantize_rows_cuda(const float* src, int64_t d, const int64_t* row_index, const int64_t* gids,
                        int64_t n, int bits, const QuantKey& key, uint8_t* packed, float* meta,
                        float* ranges, unsigned long long* status, void* stream) {
  check_args(d, n, bits);
  const auto s = static_cast<cudaStream_t>(stream);
  ADAQP_CUDA_CHECK(cudaMemsetAsync(status, 0, sizeof(*status), s));
  if (n == 0) return;
  const dim3 block(kWarp, kRowsPerBlock);
  switch (bits) {
    case 2:
      quantize_kernel<2><<<launch_grid(n), block, 0, s>>>(src, d, row_index, gids, n, key, packed,
                                                          meta, ranges, status);
      break;
    case 4:
      quantize_kernel<4><<<launch_grid(n), block, 0, s>>>(src, d, row_index, gids, n, key, packed,
                                                          meta, ranges, status);
      break;
    default:
      quantize_kernel<8><<<launch_grid(n), block, 0, s>>>(src, d, row_index, gids, n, key, packed,
                                                          meta, ranges, status);
  }
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void check_quantize_status_cuda(const unsigned long long* status, const float* src, int64_t d,
                                const int64_t* row_index, const int64_t* gids, int64_t n,
                                const QuantKey& key, void* stream) {
  ADAQP_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  unsigned long long word = 0;
  ADAQP_CUDA_CHECK(cudaMemcpy(&word, status, sizeof(word), cudaMemcpyDeviceToHost));
  if (word == 0) return;
  const int64_t i = n - static_cast<int64_t>(word);  // the lowest unquantizable row
  int64_t row = i, gid = 0;
  if (row_index != nullptr)
    ADAQP_CUDA_CHECK(cudaMemcpy(&row, row_index + i, sizeof(row), cudaMemcpyDeviceToHost));
  ADAQP_CUDA_CHECK(cudaMemcpy(&gid, gids + i, sizeof(gid), cudaMemcpyDeviceToHost));
  std::vector<float> values(static_cast<size_t>(d));
  ADAQP_CUDA_CHECK(cudaMemcpy(values.data(), src + row * d, sizeof(float) * values.size(),
                              cudaMemcpyDeviceToHost));
  throw NonFiniteError(key, gid, describe_unquantizable_row(values.data(), d));
}

void dequantize_rows_cuda(const uint8_t* packed, const float* meta, int64_t n, int64_t d, int bits,
                          float* dst, void* stream) {
  launch_dequantize<false>(packed, meta, n, d, bits, nullptr, dst, stream);
}

void dequantize_scatter_add_cuda(const uint8_t* packed, const float* meta, int64_t n, int64_t d,
                                 int bits, const int64_t* row_index, float* dst, void* stream) {
  launch_dequantize<true>(packed, meta, n, d, bits, row_index, dst, stream);
}

void encode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const float* src, int64_t d, const int64_t* src_rows, const int64_t* gids,
                       const QuantKey& key, uint8_t* out, float* ranges, unsigned long long* status,
                       void* stream) {
  const int64_t n = block_rows(counts);
  check_args(d, n, 8);
  if (n == 0) return;
  encode_block_kernel<<<launch_grid(n), dim3(kWarp, kRowsPerBlock), 0,
                        static_cast<cudaStream_t>(stream)>>>(bits, slot, counts, src, d, src_rows,
                                                             gids, key, out, ranges, status, n);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void decode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const uint8_t* in, int64_t d, float* dst, void* stream) {
  const int64_t n = block_rows(counts);
  check_args(d, n, 8);
  if (n == 0) return;
  decode_block_kernel<<<launch_grid(n), dim3(kWarp, kRowsPerBlock), 0,
                        static_cast<cudaStream_t>(stream)>>>(bits, slot, counts, in, d, dst, n);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adaqp::quant
