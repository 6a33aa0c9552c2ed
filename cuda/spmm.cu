#include <cuda_runtime.h>
#include <cusparse.h>

#include <climits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/kernels/cuda_support.h"
#include "adaqp/kernels/spmm_cuda.h"

namespace adaqp::kernels {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kColsPerLane = 4;  // one pass of a warp covers kWarp * kColsPerLane columns
constexpr unsigned kFullMask = 0xFFFFFFFFu;

void check_cusparse(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS)
    throw CudaError(std::string(call) + " failed: " + cusparseGetErrorString(status));
}

#define ADAQP_CUSPARSE_CALL(call) check_cusparse((call), #call)

struct DeviceFree {
  void operator()(void* ptr) const { cudaFree(ptr); }
};
// A cudaMallocAsync allocation, freed in the order of the stream its last use was enqueued on:
// cudaFree does not wait for the uses of such memory (cuda_runtime_api.h), and a product still
// queued would write memory the pool may have handed out again.
struct StreamOrderedFree {
  cudaStream_t stream = nullptr;
  void operator()(void* ptr) const { cudaFreeAsync(ptr, stream); }
};
struct HandleDestroy {
  void operator()(cusparseHandle_t handle) const { cusparseDestroy(handle); }
};
struct SpMatDestroy {
  void operator()(cusparseConstSpMatDescr_t descr) const { cusparseDestroySpMat(descr); }
};
struct DnMatDestroy {
  void operator()(cusparseConstDnMatDescr_t descr) const { cusparseDestroyDnMat(descr); }
};
using DevicePtr = std::unique_ptr<void, DeviceFree>;
using WorkspacePtr = std::unique_ptr<void, StreamOrderedFree>;
using HandlePtr = std::unique_ptr<std::remove_pointer_t<cusparseHandle_t>, HandleDestroy>;
using SpMatPtr = std::unique_ptr<std::remove_pointer_t<cusparseConstSpMatDescr_t>, SpMatDestroy>;
using DnMatPtr = std::unique_ptr<std::remove_pointer_t<cusparseConstDnMatDescr_t>, DnMatDestroy>;

dim3 row_grid(int64_t rows) {
  return dim3(cuda::grid_blocks(rows, kWarpsPerBlock));
}

// One warp per row (grid-stride over rows). The warp loads 32 (column, weight) pairs at a time and
// broadcasts them lane by lane; lane l accumulates columns c0 + l + t * 32 of the row, so entries
// are summed in stored order.
__global__ void spmm_row_warp_kernel(int64_t rows, const int64_t* __restrict__ indptr,
                                     const int32_t* __restrict__ indices,
                                     const float* __restrict__ values, const float* __restrict__ x,
                                     int64_t d, float* __restrict__ y, bool accumulate) {
  const int lane = threadIdx.x;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.y; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kWarpsPerBlock) {
    const int64_t begin = indptr[row], end = indptr[row + 1];
    float* yr = y + row * d;
    for (int64_t c0 = 0; c0 < d; c0 += kWarp * kColsPerLane) {
      float acc[kColsPerLane];
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) acc[t] = 0.0f;
      for (int64_t k0 = begin; k0 < end; k0 += kWarp) {
        int32_t col = 0;
        float weight = 0.0f;
        if (k0 + lane < end) {
          col = indices[k0 + lane];
          weight = values[k0 + lane];
        }
        const int count = end - k0 < kWarp ? static_cast<int>(end - k0) : kWarp;
        for (int s = 0; s < count; ++s) {
          const int64_t j = __shfl_sync(kFullMask, col, s);
          const float w = __shfl_sync(kFullMask, weight, s);
          const float* xj = x + j * d + c0 + lane;
#pragma unroll
          for (int t = 0; t < kColsPerLane; ++t) {
            if (c0 + lane + t * kWarp < d) acc[t] = fmaf(w, xj[t * kWarp], acc[t]);
          }
        }
      }
#pragma unroll
      for (int t = 0; t < kColsPerLane; ++t) {
        const int64_t c = c0 + lane + t * kWarp;
        if (c < d) yr[c] = accumulate ? yr[c] + acc[t] : acc[t];
      }
    }
  }
}

// out[i] = in[i] - base: a row block's offsets, relative to its first entry, in 32 bits.
__global__ void narrow_offsets_kernel(const int64_t* __restrict__ in, int64_t n, int64_t base,
                                      int32_t* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<int32_t>(in[i] - base);
}

}  // namespace

const char* to_string(CudaSpmmAlgorithm algorithm) {
  return algorithm == CudaSpmmAlgorithm::kCusparse ? "cusparse" : "row_warp";
}

struct CudaSpmm::Impl {
  CsrView a;
  CudaSpmmAlgorithm algorithm;
  int64_t max_block_nnz = INT32_MAX;
  // cuSPARSE only: the handle and the workspace, shared by the row blocks (row_blocks: 32-bit
  // offsets hold at most 2^31 - 1 entries), each with its offsets and matrix descriptor.
  struct Block {
    int64_t first_row = 0, rows = 0, first_entry = 0, nnz = 0;
    DevicePtr indptr32;
    SpMatPtr matrix;
  };
  HandlePtr handle;
  std::vector<Block> blocks;
  WorkspacePtr workspace;
  size_t workspace_bytes = 0;

  void prepare_cusparse() {
    ADAQP_CHECK(a.cols < INT32_MAX, "cuSPARSE path: " + std::to_string(a.cols) +
                                        " columns exceed cuSPARSE's 32-bit column indices");
    std::vector<int64_t> indptr(static_cast<size_t>(a.rows + 1));
    ADAQP_CUDA_CHECK(cudaMemcpy(indptr.data(), a.indptr, sizeof(int64_t) * indptr.size(),
                                cudaMemcpyDeviceToHost));
    if (indptr.back() == 0) return;  // products without entries need no cuSPARSE object
    cusparseHandle_t h = nullptr;
    ADAQP_CUSPARSE_CALL(cusparseCreate(&h));
    handle.reset(h);
    const std::vector<int64_t> bounds =
        row_blocks(indptr.data(), a.rows, max_block_nnz, INT32_MAX - 1);
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      Block b;
      b.first_row = bounds[k];
      b.rows = bounds[k + 1] - bounds[k];
      b.first_entry = indptr[b.first_row];
      b.nnz = indptr[bounds[k + 1]] - b.first_entry;
      void* offsets = nullptr;
      ADAQP_CUDA_CHECK(cudaMalloc(&offsets, sizeof(int32_t) * static_cast<size_t>(b.rows + 1)));
      b.indptr32.reset(offsets);
      narrow_offsets_kernel<<<cuda::grid_blocks(b.rows + 1, 256), 256>>>(
          a.indptr + b.first_row, b.rows + 1, b.first_entry, static_cast<int32_t*>(offsets));
      ADAQP_CUDA_CHECK(cudaGetLastError());
      cusparseConstSpMatDescr_t m = nullptr;
      ADAQP_CUSPARSE_CALL(cusparseCreateConstCsr(
          &m, b.rows, a.cols, b.nnz, offsets, a.indices + b.first_entry,
          a.values == nullptr ? nullptr : a.values + b.first_entry, CUSPARSE_INDEX_32I,
          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
      b.matrix.reset(m);
      blocks.push_back(std::move(b));
    }
    // Products may run on streams that do not wait for the legacy default stream.
    ADAQP_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }

  void multiply_cusparse(const float* x, int64_t d, float* y, bool accumulate,
                         cudaStream_t stream) {
    // Without accumulation y may hold anything (NaN from an earlier use): zero it rather than
    // rely on cuSPARSE never reading C when beta is 0.
    if (!accumulate)
      ADAQP_CUDA_CHECK(
          cudaMemsetAsync(y, 0, sizeof(float) * static_cast<size_t>(a.rows * d), stream));
    if (blocks.empty()) return;  // a product without entries: no cuSPARSE call
    cusparseConstDnMatDescr_t xd = nullptr;
    ADAQP_CUSPARSE_CALL(
        cusparseCreateConstDnMat(&xd, a.cols, d, d, x, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    DnMatPtr x_descr(xd);
    const float alpha = 1.0f;
    const float beta = accumulate ? 1.0f : 0.0f;
    ADAQP_CUSPARSE_CALL(cusparseSetStream(handle.get(), stream));
    for (const Block& b : blocks) {
      cusparseDnMatDescr_t yd = nullptr;
      ADAQP_CUSPARSE_CALL(cusparseCreateDnMat(&yd, b.rows, d, d, y + b.first_row * d, CUDA_R_32F,
                                              CUSPARSE_ORDER_ROW));
      DnMatPtr y_descr(yd);
      size_t bytes = 0;
      ADAQP_CUSPARSE_CALL(cusparseSpMM_bufferSize(
          handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
          b.matrix.get(), xd, &beta, yd, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
      if (bytes > workspace_bytes) {
        // Stream-ordered: the old workspace is freed after the products enqueued before, and no
        // device-wide synchronisation stalls the other streams (a halo exchange in flight).
        if (workspace != nullptr) ADAQP_CUDA_CHECK(cudaFreeAsync(workspace.release(), stream));
        workspace_bytes = 0;
        void* ptr = nullptr;
        ADAQP_CUDA_CHECK(cudaMallocAsync(&ptr, bytes, stream));
        workspace = WorkspacePtr(ptr, StreamOrderedFree{stream});
        workspace_bytes = bytes;
      }
      workspace.get_deleter().stream = stream;
      ADAQP_CUSPARSE_CALL(cusparseSpMM(
          handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
          b.matrix.get(), xd, &beta, yd, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, workspace.get()));
    }
  }

  void multiply_row_warp(const float* x, int64_t d, float* y, bool accumulate,
                         cudaStream_t stream) {
    const dim3 block(kWarp, kWarpsPerBlock);
    spmm_row_warp_kernel<<<row_grid(a.rows), block, 0, stream>>>(a.rows, a.indptr, a.indices,
                                                                 a.values, x, d, y, accumulate);
    ADAQP_CUDA_CHECK(cudaGetLastError());
  }
};

CudaSpmm::CudaSpmm(const CsrView& device_a, CudaSpmmAlgorithm algorithm, int64_t max_block_nnz)
    : impl_(std::make_unique<Impl>()) {
  ADAQP_CHECK(max_block_nnz >= 1 && max_block_nnz <= INT32_MAX,
              "cuSPARSE row block size " + std::to_string(max_block_nnz));
  impl_->max_block_nnz = max_block_nnz;
  ADAQP_CHECK(
      device_a.rows >= 0 && device_a.cols >= 0,
      "matrix shape " + std::to_string(device_a.rows) + " x " + std::to_string(device_a.cols));
  ADAQP_CHECK(device_a.indptr != nullptr, "null row offsets");
  impl_->a = device_a;
  impl_->algorithm = algorithm;
  if (algorithm == CudaSpmmAlgorithm::kCusparse) impl_->prepare_cusparse();
}

CudaSpmm::~CudaSpmm() = default;

CudaSpmmAlgorithm CudaSpmm::algorithm() const {
  return impl_->algorithm;
}

void CudaSpmm::multiply(const float* x, int64_t d, float* y, bool accumulate, void* stream) {
  ADAQP_CHECK(d >= 0, "dense width " + std::to_string(d));
  if (impl_->a.rows == 0 || d == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (impl_->algorithm == CudaSpmmAlgorithm::kCusparse)
    impl_->multiply_cusparse(x, d, y, accumulate, s);
  else
    impl_->multiply_row_warp(x, d, y, accumulate, s);
}

}  // namespace adaqp::kernels
