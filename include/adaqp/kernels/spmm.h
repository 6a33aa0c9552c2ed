// Sparse (CSR) times dense products on the CPU: the aggregation of every GNN layer. Rows are
// computed independently (one thread per block of rows, no atomics) with a vectorised loop over
// the dense columns; on AVX2 CPUs up to 64 columns at a time are summed in registers over the
// row's entries and stored once. The backward product A^T G uses a stored transpose, built once,
// so it is row-parallel too. Each output element is a float sum of its row's entries in stored
// order, one multiply and one add each (no fused multiply-add), so results depend neither on the
// thread count nor on the vector path.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/common/device.h"

namespace adaqp::kernels {

// A non-owning CSR matrix: row i has entries indptr[i] .. indptr[i+1] with columns `indices` and
// weights `values`.
struct CsrView {
  int64_t rows = 0;
  int64_t cols = 0;
  const int64_t* indptr = nullptr;   // rows + 1 entries
  const int32_t* indices = nullptr;  // indptr[rows] entries, each in [0, cols)
  const float* values = nullptr;     // indptr[rows] entries
};

// An owning CSR matrix.
struct CsrMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> indptr;
  std::vector<int32_t> indices;
  std::vector<float> values;

  CsrView view() const { return CsrView{rows, cols, indptr.data(), indices.data(), values.data()}; }
};

// y = a . x (or y += a . x when `accumulate`). x is a.cols x d and y is a.rows x d, both
// row-major and contiguous; x and y must not overlap.
void spmm_cpu(const CsrView& a, const float* x, int64_t d, float* y, bool accumulate);

// The transpose of `a` as CSR (that is, `a` in CSC form). Entries of each transposed row are in
// ascending original row order.
CsrMatrix transpose_csr(const CsrView& a);

// When `a` is square with a symmetric pattern (entry (j, i) wherever (i, j), as often; columns
// ascending within rows), the transpose's values on a's own pattern: then {a.indptr, a.indices,
// *values_t} equals transpose_csr(a), entry for entry, so the transpose needs no second pattern.
// Returns false (values_t untouched) otherwise.
bool transpose_values_on_pattern(const CsrView& a, std::vector<float>* values_t);

// Cuts the rows of a CSR matrix (row offsets `indptr`, rows + 1 entries) into consecutive blocks
// of at most `max_nnz` entries and `max_rows` rows each, greedily (each block as long as allowed):
// the block boundaries, 0 first and `rows` last. How the cuSPARSE plan, whose 32-bit offsets hold
// at most 2^31 - 1 entries, covers larger matrices. InvariantError if one row alone has more than
// `max_nnz` entries.
std::vector<int64_t> row_blocks(const int64_t* indptr, int64_t rows, int64_t max_nnz,
                                int64_t max_rows);

// y = a . x on a device, prepared once per matrix: spmm_cpu, or on CUDA a cuSPARSE plan
// (spmm_cuda.h), enqueued on the legacy default stream (libtorch's compute stream). `a`'s arrays
// live where the device computes (host memory for the CPU) and must outlive the plan; a build
// without CUDA refuses a CUDA device.
class SpmmPlan {
 public:
  virtual ~SpmmPlan() = default;
  // y = a . x (y += a . x when `accumulate`); x and y as for spmm_cpu, on the plan's device.
  virtual void multiply(const float* x, int64_t d, float* y, bool accumulate) = 0;
};

std::unique_ptr<SpmmPlan> make_spmm_plan(const Device& device, const CsrView& a);

}  // namespace adaqp::kernels
