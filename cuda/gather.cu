#include <cuda_runtime.h>

#include <string>

#include "adaqp/common/error.h"
#include "adaqp/kernels/gather.h"

namespace adaqp::kernels {
namespace {

// One warp-sized strip of threads per row; consecutive threads read consecutive columns.
__global__ void gather_rows_kernel(const float* __restrict__ src, int64_t cols,
                                   const int64_t* __restrict__ idx, int64_t n,
                                   float* __restrict__ dst) {
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.y) + threadIdx.y; row < n;
       row += static_cast<int64_t>(gridDim.x) * blockDim.y) {
    const float* s = src + idx[row] * cols;
    float* d = dst + row * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) d[c] = s[c];
  }
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(err));
}

}  // namespace

void gather_rows_cuda(const float* src, int64_t cols, const int64_t* idx, int64_t n, float* dst,
                      void* stream) {
  if (n == 0 || cols == 0) return;
  const dim3 block(32, 8);
  const int64_t blocks = (n + block.y - 1) / block.y;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
  gather_rows_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(src, cols, idx, n, dst);
  check(cudaGetLastError(), "gather_rows_cuda launch");
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace adaqp::kernels
