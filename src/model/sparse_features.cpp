#include "adaqp/model/sparse_features.h"

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/model/torch_device.h"

namespace adaqp {

kernels::CsrView SparseFeatures::view() const {
  return kernels::CsrView{rows, cols, indptr.data_ptr<int64_t>(), indices.data_ptr<int32_t>(),
                          values.data_ptr<float>()};
}

kernels::CsrView SparseFeatures::transposed() const {
  return kernels::CsrView{cols, rows, t_indptr.data_ptr<int64_t>(), t_indices.data_ptr<int32_t>(),
                          t_values.data_ptr<float>()};
}

double SparseFeatures::density() const {
  const double entries = static_cast<double>(rows) * static_cast<double>(cols);
  return entries > 0 ? static_cast<double>(values.numel()) / entries : 0.0;
}

std::optional<SparseFeatures> sparsify(const at::Tensor& dense, double max_density) {
  ADAQP_CHECK(dense.scalar_type() == at::kFloat && dense.dim() == 2 && dense.is_contiguous(),
              "sparsify: a contiguous float32 matrix, got " + dense.toString());
  const int64_t rows = dense.size(0), cols = dense.size(1);
  const int64_t nnz = dense.count_nonzero().item<int64_t>();
  if (static_cast<double>(nnz) >
      max_density * static_cast<double>(rows) * static_cast<double>(cols)) {
    return std::nullopt;
  }
  const at::Tensor host = dense.to(at::kCPU);
  const float* x = host.data_ptr<float>();
  kernels::CsrMatrix csr;
  csr.rows = rows;
  csr.cols = cols;
  csr.indptr.reserve(static_cast<size_t>(rows) + 1);
  csr.indptr.push_back(0);
  csr.indices.reserve(static_cast<size_t>(nnz));
  csr.values.reserve(static_cast<size_t>(nnz));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[i * cols + c];
      if (v != 0.0f) {
        csr.indices.push_back(static_cast<int32_t>(c));
        csr.values.push_back(v);
      }
    }
    csr.indptr.push_back(static_cast<int64_t>(csr.values.size()));
  }
  const kernels::CsrMatrix t = kernels::transpose_csr(csr.view());
  const Device device = tensor_device(dense);
  SparseFeatures s;
  s.rows = rows;
  s.cols = cols;
  s.indptr = to_device(csr.indptr, device);
  s.indices = to_device(csr.indices, device);
  s.values = to_device(csr.values, device);
  s.t_indptr = to_device(t.indptr, device);
  s.t_indices = to_device(t.indices, device);
  s.t_values = to_device(t.values, device);
  return s;
}

}  // namespace adaqp
