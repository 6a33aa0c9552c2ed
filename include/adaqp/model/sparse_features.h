// Layer 0's input kept sparse. Bag-of-words features (Cora, CiteSeer, Coauthor Physics) leave most
// of the cached A X zero (Cora 95%, CiteSeer 98%), so layer 0's dense product and its weight
// gradient spend most of an epoch multiplying zeros; as CSR they touch only the non-zeros
// (kernels::masked_spmm, the dropout mask read at each entry) and A X takes that much less memory.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "adaqp/kernels/spmm.h"

namespace adaqp {

// Above this fraction of non-zero entries A X stays dense: the sparse products then lose to the
// dense ones (benchmarks/results/README.md, "Sparse layer-0 input").
constexpr double kMaxSparseFeatureDensity = 0.1;

// A constant matrix (rows x cols) as CSR and its transpose (cols x rows), where the device
// computes.
struct SparseFeatures {
  int64_t rows = 0, cols = 0;
  at::Tensor indptr, indices, values;        // int64, int32, float32
  at::Tensor t_indptr, t_indices, t_values;  // the transpose's

  kernels::CsrView view() const;
  kernels::CsrView transposed() const;
  double density() const;
};

// `dense` (a contiguous float32 matrix, on any device) as SparseFeatures on its device when at most
// `max_density` of its entries are non-zero; otherwise nullopt.
std::optional<SparseFeatures> sparsify(const at::Tensor& dense, double max_density);

}  // namespace adaqp
