// CSR times dense products on the GPU: y = a . x (or y += a . x), the aggregation of every GNN
// layer. Two algorithms; the runtime uses kCusparse, faster at every width measured
// (benchmarks/bench_spmm_cuda.cpp compares both, cuda/GPU-CHECKLIST.md):
// - kCusparse: cusparseSpMM (CSR, row-major dense, default algorithm). cuSPARSE needs equal index
//   widths, so the plan keeps 32-bit copies of the row offsets, one per block of rows of at most
//   2^31 - 1 entries (row_blocks, spmm.h): a part of any size, as long as it has fewer than 2^31
//   columns.
// - kRowWarp: an own kernel, one warp per output row; the warp loads 32 entries at a time and each
//   lane owns a strip of columns, so every output row sums its entries in stored order (results
//   do not depend on the launch configuration).
// Entry points take device pointers and an opaque stream (cudaStream_t as void*, nullptr for the
// legacy default stream); they exist only when ADAQP_WITH_CUDA is 1.
#pragma once

#include "adaqp/config.h"

#if ADAQP_WITH_CUDA

#include <cstdint>
#include <memory>

#include "adaqp/kernels/spmm.h"

namespace adaqp::kernels {

enum class CudaSpmmAlgorithm { kCusparse, kRowWarp };

// "cusparse" or "row_warp".
const char* to_string(CudaSpmmAlgorithm algorithm);

// A product plan for one CSR matrix whose arrays live in device memory, on the device current at
// construction. The matrix arrays must outlive the plan and stay unchanged. Keeps what the
// algorithm reuses between products: for cuSPARSE a library handle, the matrix descriptor and a
// workspace grown on demand.
class CudaSpmm {
 public:
  // `device_a`: a CsrView whose indptr/indices/values are device pointers. Throws InvariantError
  // when the matrix exceeds the algorithm's index range, Error when CUDA or cuSPARSE fails.
  // `max_block_nnz` (at most 2^31 - 1): the cuSPARSE plan's largest row block; smaller only for
  // tests, to cover the blocking on small matrices.
  CudaSpmm(const CsrView& device_a, CudaSpmmAlgorithm algorithm, int64_t max_block_nnz = INT32_MAX);
  ~CudaSpmm();
  CudaSpmm(const CudaSpmm&) = delete;
  CudaSpmm& operator=(const CudaSpmm&) = delete;

  CudaSpmmAlgorithm algorithm() const;

  // Enqueues y = a . x (y += a . x when `accumulate`) on `stream`. x (a.cols x d) and y (a.rows x
  // d) are row-major, contiguous device arrays that must not overlap. Calls on one plan must not
  // run concurrently on different streams (they share the workspace).
  void multiply(const float* x, int64_t d, float* y, bool accumulate, void* stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adaqp::kernels

#endif  // ADAQP_WITH_CUDA
