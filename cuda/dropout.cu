#include <cuda_runtime.h>

#include <string>

#include "adaqp/common/philox.h"
#include "adaqp/model/dropout.h"
#include "check.cuh"

namespace adaqp {
namespace {

// One thread per block of 4 elements of a row (one Philox call each), grid-stride.
__global__ void dropout_kernel(DropoutKey key, float p, float keep,
                               const int64_t* __restrict__ gids, int64_t n, int64_t width,
                               float* __restrict__ out) {
  const int64_t blocks_per_row = (width + 3) / 4;
  const int64_t total = n * blocks_per_row;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = t / blocks_per_row, b = t % blocks_per_row;
    const PhiloxWords words =
        philox_block(key.seed, key.epoch, key.layer, RngStream::kDropout,
                     static_cast<uint64_t>(gids[i]), static_cast<uint32_t>(b));
    float* row = out + i * width;
    // A constant index into words.v keeps it in registers (a computed one spills it to memory).
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t e = b * 4 + j;
      if (e < width) row[e] = philox_uniform(words.v[j]) < p ? 0.0f : keep;
    }
  }
}

}  // namespace

void dropout_mask_cuda(const DropoutKey& key, float p, const int64_t* gids, int64_t n,
                       int64_t width, float* out, void* stream) {
  ADAQP_CHECK(p >= 0.0f && p < 1.0f, "dropout probability " + std::to_string(p));
  if (n == 0 || width == 0) return;
  const float keep = 1.0f / (1.0f - p);
  const int64_t total = n * ((width + 3) / 4);
  const int64_t blocks = (total + 255) / 256;
  dropout_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0,
                   static_cast<cudaStream_t>(stream)>>>(key, p, keep, gids, n, width, out);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adaqp
