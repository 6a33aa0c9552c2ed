#include <cuda_runtime.h>

#include "adaqp/kernels/cuda_support.h"
#include "adaqp/kernels/gather.h"

namespace adaqp::kernels {
namespace {

constexpr int kRowsPerBlock = 8;

// One warp-sized strip of threads per row; consecutive threads touch consecutive columns.
template <bool kScatterAdd>
__global__ void rows_kernel(const float* __restrict__ src, int64_t cols,
                            const int64_t* __restrict__ idx, int64_t n, float* __restrict__ dst) {
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.y) + threadIdx.y; row < n;
       row += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    if (kScatterAdd) {
      const float* s = src + row * cols;
      float* d = dst + idx[row] * cols;
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) d[c] = __fadd_rn(d[c], s[c]);
    } else {
      const float* s = src + idx[row] * cols;
      float* d = dst + row * cols;
      for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) d[c] = s[c];
    }
  }
}

template <bool kScatterAdd>
void launch(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst,
            void* stream) {
  if (n == 0 || cols == 0) return;
  const dim3 block(32, kRowsPerBlock);
  rows_kernel<kScatterAdd>
      <<<cuda::grid_blocks(n, kRowsPerBlock), block, 0, static_cast<cudaStream_t>(stream)>>>(
          src, cols, idx, n, dst);
  ADAQP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void gather_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst,
                      void* stream) {
  launch<false>(src, cols, idx, n, dst, stream);
}

void scatter_add_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n,
                           float* dst, void* stream) {
  launch<true>(src, cols, idx, n, dst, stream);
}

}  // namespace adaqp::kernels
