#include "adaqp/kernels/spmm.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/config.h"
#include "adaqp/kernels/no_cuda.h"
#include "csr_row_product.h"
#if ADAQP_WITH_CUDA
#include "adaqp/kernels/spmm_cuda.h"
#endif

namespace adaqp::kernels {

namespace {

// Below this many multiply-adds a product runs on one thread (the fork costs more).
constexpr int64_t kParallelWork = 1 << 15;

class CpuSpmmPlan final : public SpmmPlan {
 public:
  explicit CpuSpmmPlan(const CsrView& a) : a_(a) {}
  void multiply(const float* x, int64_t d, float* y, bool accumulate) override {
    spmm_cpu(a_, x, d, y, accumulate);
  }

 private:
  CsrView a_;
};

#if ADAQP_WITH_CUDA
// cuSPARSE: faster than the own row-per-warp kernel at every width measured
// (cuda/GPU-CHECKLIST.md).
class CudaSpmmPlan final : public SpmmPlan {
 public:
  explicit CudaSpmmPlan(const CsrView& a) : plan_(a, CudaSpmmAlgorithm::kCusparse) {}
  void multiply(const float* x, int64_t d, float* y, bool accumulate) override {
    plan_.multiply(x, d, y, accumulate, nullptr);
  }

 private:
  CudaSpmm plan_;
};
#endif

// A's entries as they are (a zero weight still multiplies: 0 * inf is NaN).
struct StoredEntries {
  struct Cursor {
    const CsrView& a;
    int64_t k, end;
    bool next(int64_t& column, float& weight) {
      if (k == end) return false;
      column = a.indices[k];
      weight = a.values[k++];
      return true;
    }
  };
  const CsrView& a;
  Cursor entries(int64_t begin, int64_t end) const { return Cursor{a, begin, end}; }
};

}  // namespace

void spmm_cpu(const CsrView& a, const float* x, int64_t d, float* y, bool accumulate) {
  const int64_t work = (a.rows > 0 ? a.indptr[a.rows] : 0) * d;
#pragma omp parallel for schedule(dynamic, 64) if (work > kParallelWork)
  for (int64_t i = 0; i < a.rows; ++i) {
    detail::best_row_product(StoredEntries{a}, a.indptr[i], a.indptr[i + 1], x, d, y + i * d,
                             accumulate);
  }
}

CsrMatrix transpose_csr(const CsrView& a) {
  ADAQP_CHECK_LE(a.rows, std::numeric_limits<int32_t>::max(), "rows for 32-bit column indices");
  CsrMatrix t;
  t.rows = a.cols;
  t.cols = a.rows;
  const int64_t nnz = a.rows > 0 ? a.indptr[a.rows] : 0;
  t.indptr.assign(static_cast<size_t>(a.cols) + 1, 0);
  for (int64_t k = 0; k < nnz; ++k) ++t.indptr[static_cast<size_t>(a.indices[k]) + 1];
  for (int64_t c = 0; c < a.cols; ++c) t.indptr[c + 1] += t.indptr[c];
  t.indices.resize(static_cast<size_t>(nnz));
  t.values.resize(static_cast<size_t>(nnz));
  std::vector<int64_t> next(t.indptr.begin(), t.indptr.end() - 1);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const int64_t pos = next[a.indices[k]]++;
      t.indices[pos] = static_cast<int32_t>(i);
      t.values[pos] = a.values[k];
    }
  }
  return t;
}

bool transpose_values_on_pattern(const CsrView& a, std::vector<float>* values_t) {
  if (a.rows != a.cols) return false;
  const int64_t nnz = a.rows > 0 ? a.indptr[a.rows] : 0;
  std::vector<float> t(static_cast<size_t>(nnz));
  bool symmetric = true;
  // Entry k = (j, i) of the transpose is a's entry (i, j); an entry repeated m times in row j must
  // be repeated m times in row i.
#pragma omp parallel for schedule(dynamic, 1024) reduction(&& : symmetric) if (nnz > 65536)
  for (int64_t j = 0; j < a.rows; ++j) {
    const int32_t* row_j = a.indices + a.indptr[j];
    const int32_t* end_j = a.indices + a.indptr[j + 1];
    for (const int32_t* k = row_j; k < end_j && symmetric; ++k) {
      const int64_t i = *k;
      const int32_t* row_i = a.indices + a.indptr[i];
      const int32_t* end_i = a.indices + a.indptr[i + 1];
      const auto in_i = std::equal_range(row_i, end_i, static_cast<int32_t>(j));
      const auto in_j = std::equal_range(row_j, end_j, static_cast<int32_t>(i));
      if (in_i.second - in_i.first != in_j.second - in_j.first) {
        symmetric = false;
      } else {
        // The r-th copy of (j, i) is the r-th copy of (i, j).
        t[static_cast<size_t>(k - a.indices)] =
            a.values[(in_i.first - a.indices) + (k - in_j.first)];
      }
    }
  }
  if (!symmetric) return false;
  *values_t = std::move(t);
  return true;
}

std::unique_ptr<SpmmPlan> make_spmm_plan(const Device& device, const CsrView& a) {
  if (!device.is_cuda()) return std::make_unique<CpuSpmmPlan>(a);
#if ADAQP_WITH_CUDA
  return std::make_unique<CudaSpmmPlan>(a);
#else
  no_cuda("make_spmm_plan");
#endif
}

std::vector<int64_t> row_blocks(const int64_t* indptr, int64_t rows, int64_t max_nnz,
                                int64_t max_rows) {
  ADAQP_CHECK(rows >= 0 && max_nnz >= 1 && max_rows >= 1, "row block limits");
  std::vector<int64_t> bounds{0};
  while (bounds.back() < rows) {
    const int64_t first = bounds.back();
    // The last row end within max_nnz entries of the block's start, and within max_rows rows.
    const int64_t* limit =
        std::upper_bound(indptr + first, indptr + rows + 1, indptr[first] + max_nnz);
    const int64_t end = std::min<int64_t>(limit - indptr - 1, first + max_rows);
    if (end == first)
      throw InvariantError("row " + std::to_string(first) + " has " +
                           std::to_string(indptr[first + 1] - indptr[first]) +
                           " entries, more than a block of " + std::to_string(max_nnz) + " holds");
    bounds.push_back(end);
  }
  return bounds;
}

}  // namespace adaqp::kernels
