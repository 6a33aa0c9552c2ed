#include <cuda_runtime.h>

#include "adaqp/common/philox.h"
#include "adaqp/kernels/cuda_support.h"
#include "adaqp/kernels/dropout.h"

namespace adaqp::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

// Warp-per-word kernels: warp k handles word k % words of row k / words, lane j its element
// 32 * (k % words) + j (idle past the row's end), so loads and stores are coalesced and a word of
// bits is one ballot. The loop bound is the same for every lane of a warp (ballots need all 32).
unsigned grid_for(int64_t warps) {
  return cuda::grid_blocks(warps, kWarpsPerBlock);
}

__device__ __forceinline__ int64_t first_warp() {
  return (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) / 32;
}

__device__ __forceinline__ int64_t warp_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
}

__device__ __forceinline__ bool kept(const MaskView& m, int64_t row, int64_t e) {
  if (m.bits == nullptr) return true;
  const int64_t bit = m.offset + e;
  return ((m.bits[row * m.words_per_row + bit / 32] >> (bit % 32)) & 1u) != 0;
}

__device__ __forceinline__ uint32_t word_of(const PhiloxWords& w, int j) {
  // Constant indices keep w.v in registers (a computed one spills it to memory).
  return j == 0 ? w.v[0] : j == 1 ? w.v[1] : j == 2 ? w.v[2] : w.v[3];
}

__global__ void keep_kernel(DropoutKey key, float p, const int64_t* __restrict__ gids, int64_t n,
                            int64_t width, uint32_t* __restrict__ keep) {
  const int lane = threadIdx.x & 31;
  const int64_t words = bit_words(width);
  for (int64_t k = first_warp(); k < n * words; k += warp_stride()) {
    const int64_t i = k / words, w = k % words;
    const int64_t e = 32 * w + lane;
    bool bit = false;
    if (e < width) {
      const PhiloxWords r =
          philox_block(key.seed, key.epoch, key.layer, RngStream::kDropout,
                       static_cast<uint64_t>(gids[i]), static_cast<uint32_t>(e / 4));
      bit = philox_uniform(word_of(r, static_cast<int>(e % 4))) >= p;
    }
    const unsigned bits = __ballot_sync(0xFFFFFFFFu, bit);
    if (lane == 0) keep[i * words + w] = bits;
  }
}

// Thread per (edge, block of 4 heads).
__global__ void edge_scale_kernel(DropoutKey key, float p, const int64_t* __restrict__ dst,
                                  const int64_t* __restrict__ src, int64_t edges,
                                  const int64_t* __restrict__ dst_gids,
                                  const int64_t* __restrict__ src_gids, int64_t heads,
                                  float* __restrict__ scale) {
  const int64_t blocks = (heads + 3) / 4;
  const float kept = 1.0f / (1.0f - p);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < edges * blocks;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = t / blocks, b = t % blocks;
    const PhiloxWords r =
        philox_edge_block(key.seed, key.epoch, key.layer, static_cast<uint64_t>(dst_gids[dst[e]]),
                          static_cast<uint64_t>(src_gids[src[e]]), static_cast<uint32_t>(b));
    for (int j = 0; j < 4 && 4 * b + j < heads; ++j) {
      scale[e * heads + 4 * b + j] = philox_uniform(word_of(r, j)) >= p ? kept : 0.0f;
    }
  }
}

__global__ void mask_kernel(const float* x, int64_t n, int64_t d, MaskView m, bool relu, float* out,
                            uint32_t* __restrict__ positive) {
  const int lane = threadIdx.x & 31;
  const int64_t words = bit_words(d);
  for (int64_t k = first_warp(); k < n * words; k += warp_stride()) {
    const int64_t i = k / words, w = k % words;
    const int64_t e = 32 * w + lane;
    bool pos = false;
    if (e < d) {
      float v = x[i * d + e];
      pos = v > 0.0f;
      if (relu) v = (pos || v != v) ? v : 0.0f;
      out[i * d + e] = __fmul_rn(v, kept(m, i, e) ? m.scale : 0.0f);
    }
    const unsigned bits = __ballot_sync(0xFFFFFFFFu, pos);
    if (positive != nullptr && lane == 0) positive[i * words + w] = bits;
  }
}

__global__ void mask_backward_kernel(const float* dy, int64_t n, int64_t d, MaskView m,
                                     const uint32_t* __restrict__ positive, float* dx) {
  const int64_t words = bit_words(d);
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < n * d;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t / d, e = t % d;
    const float v = __fmul_rn(dy[t], kept(m, i, e) ? m.scale : 0.0f);
    const bool pos = positive == nullptr || ((positive[i * words + e / 32] >> (e % 32)) & 1u) != 0;
    dx[t] = pos ? v : 0.0f;
  }
}

// Warp per 32 entries: lane j finds the row of entry 32 w + j (binary search over the row
// offsets), draws its element, and the word is one ballot.
__global__ void sparse_keep_kernel(DropoutKey key, float p, CsrView a, int64_t nnz,
                                   const int64_t* __restrict__ gids, int64_t offset,
                                   uint32_t* __restrict__ keep) {
  const int lane = threadIdx.x & 31;
  for (int64_t w = first_warp(); w < (nnz + 31) / 32; w += warp_stride()) {
    const int64_t k = 32 * w + lane;
    bool kept_here = false;
    if (k < nnz) {
      int64_t lo = 0, hi = a.rows;  // the row i with indptr[i] <= k < indptr[i + 1]
      while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        if (a.indptr[mid] <= k) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      const int64_t c = offset + a.indices[k];  // the element of the node's mask row
      const PhiloxWords r =
          philox_block(key.seed, key.epoch, key.layer, RngStream::kDropout,
                       static_cast<uint64_t>(gids[lo]), static_cast<uint32_t>(c / 4));
      kept_here = philox_uniform(word_of(r, static_cast<int>(c % 4))) >= p;
    }
    const unsigned bits = __ballot_sync(0xFFFFFFFFu, kept_here);
    if (lane == 0) keep[w] = bits;
  }
}

// Warp per row: the lanes take the row's columns 32 apart and each walks the row's entries (the
// same for all lanes: broadcast loads), so x's rows are read coalesced.
__global__ void masked_spmm_kernel(CsrView a, const uint32_t* __restrict__ keep, float scale,
                                   const int32_t* __restrict__ entries, const float* x, int64_t d,
                                   float* y) {
  const int lane = threadIdx.x & 31;
  for (int64_t i = first_warp(); i < a.rows; i += warp_stride()) {
    const int64_t begin = a.indptr[i], end = a.indptr[i + 1];
    for (int64_t e = lane; e < d; e += 32) {
      float acc = 0.0f;
      for (int64_t j = begin; j < end; ++j) {
        const int64_t k = entries != nullptr ? entries[j] : j;
        const bool kept_here = keep == nullptr || ((keep[k / 32] >> (k % 32)) & 1u) != 0;
        const float w = __fmul_rn(a.values[k], kept_here ? scale : 0.0f);
        if (w != 0.0f) acc = __fmaf_rn(w, x[static_cast<int64_t>(a.indices[j]) * d + e], acc);
      }
      y[i * d + e] = acc;
    }
  }
}

}  // namespace

void dropout_keep_bits_cuda(const DropoutKey& key, float p, const int64_t* gids, int64_t n,
                            int64_t width, uint32_t* keep) {
  if (n == 0 || width == 0) return;
  keep_kernel<<<grid_for(n * bit_words(width)), kThreads>>>(key, p, gids, n, width, keep);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void edge_dropout_scale_cuda(const DropoutKey& key, float p, const int64_t* dst, const int64_t* src,
                             int64_t edges, const int64_t* dst_gids, const int64_t* src_gids,
                             int64_t heads, float* scale) {
  const int64_t threads = edges * ((heads + 3) / 4);
  if (threads == 0) return;
  edge_scale_kernel<<<cuda::grid_blocks(threads, kThreads), kThreads>>>(
      key, p, dst, src, edges, dst_gids, src_gids, heads, scale);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void apply_mask_cuda(const float* x, int64_t n, int64_t d, const MaskView& mask, bool relu,
                     float* out, uint32_t* positive) {
  if (n == 0 || d == 0) return;
  mask_kernel<<<grid_for(n * bit_words(d)), kThreads>>>(x, n, d, mask, relu, out, positive);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void apply_mask_backward_cuda(const float* dy, int64_t n, int64_t d, const MaskView& mask,
                              const uint32_t* positive, float* dx) {
  if (n == 0 || d == 0) return;
  mask_backward_kernel<<<cuda::grid_blocks(n * d, kThreads), kThreads>>>(dy, n, d, mask, positive,
                                                                         dx);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void sparse_keep_bits_cuda(const DropoutKey& key, float p, const CsrView& a, int64_t nnz,
                           const int64_t* gids, int64_t offset, uint32_t* keep) {
  if (a.rows == 0 || nnz == 0) return;
  sparse_keep_kernel<<<grid_for((nnz + 31) / 32), kThreads>>>(key, p, a, nnz, gids, offset, keep);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

void masked_spmm_cuda(const CsrView& a, const uint32_t* keep, float scale, const int32_t* entries,
                      const float* x, int64_t d, float* y) {
  if (a.rows == 0 || d == 0) return;
  masked_spmm_kernel<<<grid_for(a.rows), kThreads>>>(a, keep, scale, entries, x, d, y);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adaqp::kernels
