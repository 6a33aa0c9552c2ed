// Layer 0's input kept sparse. Bag-of-words features (Cora, CiteSeer, Coauthor Physics) leave most
// of the cached A X zero (Cora 95%, CiteSeer 98%), so layer 0's dense product and its weight
// gradient spend most of an epoch multiplying zeros and drawing dropout for them; as CSR they touch
// only the non-zeros (kernels::masked_spmm, the mask drawn at the entries: sparse_keep_bits) and
// A X takes that much less memory.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "adaqp/kernels/spmm.h"
#include "adaqp/partition/part.h"

namespace adaqp {

// Above this fraction of non-zero entries A X stays dense: there the CSR with its transpose (16
// bytes a non-zero) holds 80% of the dense matrix (4 bytes an entry), while a training step's
// sparse layer 0 (mask drawn at the non-zeros, forward, weight gradient) is about 2x faster than
// the dense one (they break even between 30% and 50% on one AVX2 core:
// benchmarks/bench_sparse_features.cpp). benchmarks/results/README.md, "Sparse layer-0 input".
constexpr double kMaxSparseFeatureDensity = 0.2;

// A constant matrix (rows x cols) as CSR, and its transpose as a walk over the same entries
// (kernels::masked_spmm's `entries`): the transpose's row c lists the entries of column c, in
// ascending row order, by their positions in the CSR. Where the device computes.
struct SparseFeatures {
  int64_t rows = 0, cols = 0;
  at::Tensor indptr, indices, values;      // int64, int32, float32
  at::Tensor t_indptr, t_rows, t_entries;  // int64, int32 (the entries' rows), int32

  int64_t nnz() const { return values.numel(); }
  kernels::CsrView view() const;
  // The transpose's pattern over the CSR's values: read its entries through t_entries.
  kernels::CsrView transposed() const;
  double density() const;
};

// `dense` (a contiguous float32 matrix, on any device) as SparseFeatures on its device when at most
// `max_density` of its entries are non-zero (and fewer than 2^31) and every value is finite;
// otherwise nullopt.
std::optional<SparseFeatures> sparsify(const at::Tensor& dense, double max_density);

// The features `csr` holds (rows x cols, as a part file holds them) as SparseFeatures on the CPU
// when at most `max_density` of them are non-zero: what sparsify makes of their dense matrix (the
// CSR's stored zeros, -0.0 among them, left out); otherwise nullopt.
std::optional<SparseFeatures> sparse_from_csr(const FeatureCsr& csr, int64_t rows, int64_t cols,
                                              double max_density);

// S x dense (s.rows x x.cols, on the CPU; S and x on the host). Each value sums S's entries in
// stored order from 0, as kernels::spmm's product of S and x's dense matrix does, but skips x's
// zeros, which can change only the sign of a zero sum.
at::Tensor dense_product(const kernels::CsrView& s, const SparseFeatures& x);

// Layer 0's A X from X's non-zeros, on the host: a_local x + a_halo h, with `x` the owned rows (as
// CSR, on the CPU) and `h` the received rows (a_halo.cols x x.cols, dense), as SparseFeatures when
// at most `max_density` of it is non-zero and every value finite (otherwise nullopt: compute it
// dense). Each value sums as kernels::spmm's product does (from 0, the local block's entries in
// stored order, then the halo block's: the same multiplies and adds) but skips the products of
// zeros, which can change only the sign of a zero sum, and zeros are not stored: bit for bit the
// values sparsify would keep of the dense product, in time and memory of the non-zeros.
std::optional<SparseFeatures> sparse_product(const kernels::CsrView& a_local,
                                             const SparseFeatures& x,
                                             const kernels::CsrView& a_halo, const float* h,
                                             double max_density);

}  // namespace adaqp
