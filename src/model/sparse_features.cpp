#include "adaqp/model/sparse_features.h"

#include <ATen/ATen.h>

#include <algorithm>
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

// The CSR (rows x cols; columns ascending within a row) as SparseFeatures on `device`, with its
// transpose by counting sort: rows ascend within each column.
SparseFeatures from_csr(int64_t rows, int64_t cols, std::vector<int64_t>&& indptr,
                        std::vector<int32_t>&& indices, std::vector<float>&& values,
                        const Device& device) {
  const auto nnz = static_cast<int64_t>(values.size());
  std::vector<int64_t> t_indptr(static_cast<size_t>(cols) + 1, 0);
  for (const int32_t c : indices) ++t_indptr[c + 1];
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
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[i * cols + c];
      if (v != 0.0f) {
        indices.push_back(static_cast<int32_t>(c));
        values.push_back(v);
      }
    }
    indptr[i + 1] = static_cast<int64_t>(values.size());
  }
  // Counted again from what was stored: the arrays below are sized by it.
  ADAQP_CHECK_EQ(static_cast<int64_t>(values.size()), nnz, "sparsify: non-zeros stored, counted");
  return from_csr(rows, cols, std::move(indptr), std::move(indices), std::move(values), device);
}

std::optional<SparseFeatures> sparse_from_csr(const FeatureCsr& csr, int64_t rows, int64_t cols,
                                              double max_density) {
  ADAQP_CHECK(static_cast<int64_t>(csr.indptr.size()) == rows + 1,
              "sparse_from_csr: one offset a row and one more");
  int64_t nnz = 0;
  for (const float v : csr.values) {
    if (!std::isfinite(v)) return std::nullopt;  // as sparsify: such a matrix stays dense
    nnz += v != 0.0f ? 1 : 0;
  }
  if (static_cast<double>(nnz) >
          max_density * static_cast<double>(rows) * static_cast<double>(cols) ||
      nnz > std::numeric_limits<int32_t>::max() || rows > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  std::vector<int64_t> indptr(static_cast<size_t>(rows) + 1, 0);
  std::vector<int32_t> indices;
  std::vector<float> values;
  indices.reserve(static_cast<size_t>(nnz));
  values.reserve(static_cast<size_t>(nnz));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t e = csr.indptr[i]; e < csr.indptr[i + 1]; ++e) {
      if (csr.values[e] == 0.0f) continue;
      indices.push_back(csr.columns[e]);
      values.push_back(csr.values[e]);
    }
    indptr[i + 1] = static_cast<int64_t>(values.size());
  }
  return from_csr(rows, cols, std::move(indptr), std::move(indices), std::move(values),
                  Device::cpu());
}

at::Tensor dense_product(const kernels::CsrView& s, const SparseFeatures& x) {
  ADAQP_CHECK(!tensor_device(x.values).is_cuda(), "dense_product: X on the host");
  ADAQP_CHECK(s.cols == x.rows, "dense_product: S's columns are X's rows");
  const int64_t cols = x.cols;
  at::Tensor y = at::zeros({s.rows, cols});
  float* out = y.data_ptr<float>();
  const int64_t* x_indptr = x.indptr.data_ptr<int64_t>();
  const int32_t* x_indices = x.indices.data_ptr<int32_t>();
  const float* x_values = x.values.data_ptr<float>();
  for (int64_t i = 0; i < s.rows; ++i) {
    float* row = out + i * cols;
    for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) {
      const int32_t r = s.indices[e];
      const float w = s.values[e];
      for (int64_t k = x_indptr[r]; k < x_indptr[r + 1]; ++k) row[x_indices[k]] += w * x_values[k];
    }
  }
  return y;
}

std::optional<SparseFeatures> sparse_product(const kernels::CsrView& a_local,
                                             const SparseFeatures& x,
                                             const kernels::CsrView& a_halo, const float* h,
                                             double max_density) {
  ADAQP_CHECK(!tensor_device(x.values).is_cuda(), "sparse_product: X on the host");
  ADAQP_CHECK(a_local.cols == x.rows && a_halo.rows == a_local.rows,
              "sparse_product: blocks of one row count, the local one over X's rows");
  const int64_t rows = a_local.rows, cols = x.cols;
  const auto limit = static_cast<int64_t>(
      std::min(max_density * static_cast<double>(rows) * static_cast<double>(cols),
               static_cast<double>(std::numeric_limits<int32_t>::max())));
  // The halo rows' non-zeros, as CSR over h's rows.
  std::vector<int64_t> h_indptr(static_cast<size_t>(a_halo.cols) + 1, 0);
  std::vector<int32_t> h_indices;
  std::vector<float> h_values;
  for (int64_t r = 0; r < a_halo.cols; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = h[r * cols + c];
      if (v == 0.0f) continue;
      h_indices.push_back(static_cast<int32_t>(c));
      h_values.push_back(v);
    }
    h_indptr[r + 1] = static_cast<int64_t>(h_values.size());
  }
  const int64_t* x_indptr = x.indptr.data_ptr<int64_t>();
  const int32_t* x_indices = x.indices.data_ptr<int32_t>();
  const float* x_values = x.values.data_ptr<float>();
  std::vector<float> sum(static_cast<size_t>(cols));
  std::vector<int64_t> touched_by(static_cast<size_t>(cols), -1);
  std::vector<int32_t> touched;
  std::vector<int64_t> indptr(static_cast<size_t>(rows) + 1, 0);
  std::vector<int32_t> indices;
  std::vector<float> values;
  // Adds `w` times the stored row [begin, end) into row i's sums.
  const auto add_row = [&](int64_t i, float w, int64_t begin, int64_t end, const int32_t* columns,
                           const float* row_values) {
    for (int64_t k = begin; k < end; ++k) {
      const int32_t c = columns[k];
      if (touched_by[c] != i) {
        touched_by[c] = i;
        sum[c] = 0.0f;
        touched.push_back(c);
      }
      sum[c] += w * row_values[k];
    }
  };
  for (int64_t i = 0; i < rows; ++i) {
    touched.clear();
    for (int64_t e = a_local.indptr[i]; e < a_local.indptr[i + 1]; ++e) {
      const int32_t r = a_local.indices[e];
      add_row(i, a_local.values[e], x_indptr[r], x_indptr[r + 1], x_indices, x_values);
    }
    for (int64_t e = a_halo.indptr[i]; e < a_halo.indptr[i + 1]; ++e) {
      const int32_t r = a_halo.indices[e];
      add_row(i, a_halo.values[e], h_indptr[r], h_indptr[r + 1], h_indices.data(), h_values.data());
    }
    std::sort(touched.begin(), touched.end());
    for (const int32_t c : touched) {
      if (sum[c] == 0.0f) continue;
      if (!std::isfinite(sum[c]) || static_cast<int64_t>(values.size()) >= limit)
        return std::nullopt;
      indices.push_back(c);
      values.push_back(sum[c]);
    }
    indptr[i + 1] = static_cast<int64_t>(values.size());
  }
  return from_csr(rows, cols, std::move(indptr), std::move(indices), std::move(values),
                  Device::cpu());
}

}  // namespace adaqp
