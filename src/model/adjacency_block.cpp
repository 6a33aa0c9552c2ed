#include "adaqp/model/adjacency_block.h"

#include <utility>

#include "adaqp/tensor/torch_device.h"

namespace adaqp {

std::vector<float> block_values(const EdgeNorm& norm, const std::vector<int64_t>& indptr,
                                const std::vector<int32_t>& indices,
                                const std::vector<int64_t>& in_deg,
                                const std::vector<int64_t>& col_out_deg) {
  std::vector<float> values(indices.size());
  const int64_t rows = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      const int64_t out_deg = col_out_deg[indices[k]];
      values[k] = out_deg < 0 ? 1.0F : norm.weight(in_deg[i], out_deg);
    }
  }
  return values;
}

AdjacencyBlock::AdjacencyBlock(const kernels::CsrView& view, kernels::CsrMatrix owned,
                               const Device& device, const AdjacencyBlock* same_pattern)
    : owned_(std::move(owned)), view_(view) {
  if (!owned_.indptr.empty()) view_ = owned_.view();
  const int64_t nnz = view_.indptr[view_.rows];
  indptr_ = same_pattern != nullptr ? same_pattern->indptr_
                                    : where_computed(view_.indptr, view_.rows + 1, device);
  indices_ =
      same_pattern != nullptr ? same_pattern->indices_ : where_computed(view_.indices, nnz, device);
  values_ = where_computed(view_.values, nnz, device);
  plan_ = kernels::make_spmm_plan(
      device, kernels::CsrView{view_.rows, view_.cols, indptr_.data_ptr<int64_t>(),
                               indices_.data_ptr<int32_t>(), values_.data_ptr<float>()});
}

AdjacencyBlock::~AdjacencyBlock() = default;

std::unique_ptr<AdjacencyBlock> AdjacencyBlock::transpose(const kernels::CsrView& view,
                                                          const Device& device) {
  return std::make_unique<AdjacencyBlock>(kernels::CsrView{}, kernels::transpose_csr(view), device);
}

void AdjacencyBlock::multiply(const float* x, int64_t d, float* y, bool accumulate) {
  plan_->multiply(x, d, y, accumulate);
}

}  // namespace adaqp
