#include "adaqp/model/sparse_features.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

kernels::CsrView SparseFeatures::view() const {
  return kernels::CsrView{rows, cols, indptr.data_ptr<int64_t>(), indices.data_ptr<int32_t>(),
                          values.data_ptr<float>()};
}

kernels::CsrView SparseFeatures::transposed() const {
  return kernels::CsrView{cols, rows, t_indptr.data_ptr<int64_t>(), t_rows.data_ptr<int32_t>(),
                          values.data_ptr<float>()};
}

double SparseFeatures::density() const {
  const double entries = static_cast<double>(rows) * static_cast<double>(cols);
  return entries > 0 ? static_cast<double>(values.numel()) / entries : 0.0;
}

namespace {

// A 1-d tensor holding `v` where `device` computes: v's own memory on the CPU (the tensor owns
// it), a copy on a GPU.
template <typename T>
at::Tensor adopt(std::vector<T>&& v, at::ScalarType type, const Device& device) {
  auto* owner = new std::vector<T>(std::move(v));
  const at::Tensor host = at::from_blob(
      owner->data(), {static_cast<int64_t>(owner->size())}, [owner](void*) { delete owner; },
      at::TensorOptions().dtype(type));
  return where_computed(host, device);
}

// The non-zeros of x, and how many of its values are not finite.
std::pair<int64_t, int64_t> count_nonzero(const float* x, int64_t n) {
  int64_t count = 0, not_finite = 0;
#pragma omp parallel for reduction(+ : count, not_finite) schedule(static)
  for (int64_t k = 0; k < n; ++k) {
    count += x[k] != 0.0f ? 1 : 0;
    not_finite += std::isfinite(x[k]) ? 0 : 1;
  }
  return {count, not_finite};
}

}  // namespace

std::optional<SparseFeatures> sparsify(const at::Tensor& dense, double max_density) {
  ADAQP_CHECK(dense.scalar_type() == at::kFloat && dense.dim() == 2 && dense.is_contiguous(),
              "sparsify: a contiguous float32 matrix, got " + dense.toString());
  const int64_t rows = dense.size(0), cols = dense.size(1);
  const Device device = tensor_device(dense);
  // Counted where the matrix is: a dense one is not copied off a GPU.
  const auto [nnz, not_finite] =
      device.is_cuda() ? std::pair{dense.count_nonzero().item<int64_t>(),
                                   at::logical_not(at::isfinite(dense)).sum().item<int64_t>()}
                       : count_nonzero(dense.data_ptr<float>(), dense.numel());
  // A non-finite value stays dense: masked there, a dropped one is NaN (0 times it), which the
  // sparse product, skipping dropped entries, would not give.
  if (static_cast<double>(nnz) >
          max_density * static_cast<double>(rows) * static_cast<double>(cols) ||
      nnz > std::numeric_limits<int32_t>::max() || rows > std::numeric_limits<int32_t>::max() ||
      not_finite > 0) {
    return std::nullopt;
  }
  const at::Tensor host = dense.to(at::kCPU);
  const float* x = host.data_ptr<float>();
  std::vector<int64_t> indptr(static_cast<size_t>(rows) + 1, 0);
  std::vector<int32_t> indices;
  std::vector<float> values;
  indices.reserve(static_cast<size_t>(nnz));
  values.reserve(static_cast<size_t>(nnz));
  std::vector<int64_t> t_indptr(static_cast<size_t>(cols) + 1, 0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[i * cols + c];
      if (v != 0.0f) {
        indices.push_back(static_cast<int32_t>(c));
        values.push_back(v);
        ++t_indptr[c + 1];
      }
    }
    indptr[i + 1] = static_cast<int64_t>(values.size());
  }
  // Counted again from what was stored: the arrays below are sized by it.
  ADAQP_CHECK_EQ(static_cast<int64_t>(values.size()), nnz, "sparsify: non-zeros stored, counted");
  // The transpose by counting sort: rows ascend within each column.
  for (int64_t c = 0; c < cols; ++c) t_indptr[c + 1] += t_indptr[c];
  std::vector<int32_t> t_rows(static_cast<size_t>(nnz)), t_entries(static_cast<size_t>(nnz));
  std::vector<int64_t> next(t_indptr.begin(), t_indptr.end() - 1);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      const int64_t at = next[indices[k]]++;
      t_rows[at] = static_cast<int32_t>(i);
      t_entries[at] = static_cast<int32_t>(k);
    }
  }
  SparseFeatures s;
  s.rows = rows;
  s.cols = cols;
  s.indptr = adopt(std::move(indptr), at::kLong, device);
  s.indices = adopt(std::move(indices), at::kInt, device);
  s.values = adopt(std::move(values), at::kFloat, device);
  s.t_indptr = adopt(std::move(t_indptr), at::kLong, device);
  s.t_rows = adopt(std::move(t_rows), at::kInt, device);
  s.t_entries = adopt(std::move(t_entries), at::kInt, device);
  return s;
}

}  // namespace adaqp
