// Layer 0's A X made from X's non-zeros on the host (model/sparse_features.h, sparse_product) holds
// exactly what sparsify keeps of the dense product the blocks compute (AdjacencyBlock::multiply,
// local block then halo block): the same entries and values bit for bit, the same transpose, and
// no matrix where the dense one would stay dense (too many non-zeros, a non-finite value).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "adaqp/model/adjacency_block.h"
#include "adaqp/model/sparse_features.h"

namespace adaqp {
namespace {

// A random CSR block (rows x cols, about `per_row` entries a row, columns ascending) of weights
// of either sign.
kernels::CsrMatrix random_block(int64_t rows, int64_t cols, int per_row, std::mt19937& rng) {
  kernels::CsrMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.indptr.push_back(0);
  std::uniform_real_distribution<float> weight(-1.0f, 1.0f);
  std::bernoulli_distribution in_row(static_cast<double>(per_row) / static_cast<double>(cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      if (!in_row(rng)) continue;
      m.indices.push_back(static_cast<int32_t>(c));
      m.values.push_back(weight(rng));
    }
    m.indptr.push_back(static_cast<int64_t>(m.indices.size()));
  }
  return m;
}

kernels::CsrView view_of(const kernels::CsrMatrix& m) {
  return kernels::CsrView{m.rows, m.cols, m.indptr.data(), m.indices.data(), m.values.data()};
}

// rows x cols of values in [-4, 4), each non-zero with probability `density`; some zeros are -0.0.
at::Tensor random_rows(int64_t rows, int64_t cols, double density, std::mt19937& rng) {
  at::Tensor x = at::zeros({rows, cols});
  float* p = x.data_ptr<float>();
  std::bernoulli_distribution nonzero(density), negative_zero(0.1);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  for (int64_t k = 0; k < rows * cols; ++k)
    p[k] = nonzero(rng) ? value(rng) : (negative_zero(rng) ? -0.0f : 0.0f);
  return x;
}

// The dense product a_local x + a_halo h as DistGraph made it before sparse_product.
at::Tensor dense_product(const kernels::CsrMatrix& a_local, const at::Tensor& x,
                         const kernels::CsrMatrix& a_halo, const at::Tensor& h) {
  AdjacencyBlock local(view_of(a_local), kernels::CsrMatrix{}, Device::cpu());
  AdjacencyBlock halo(view_of(a_halo), kernels::CsrMatrix{}, Device::cpu());
  at::Tensor y = at::empty({a_local.rows, x.size(1)});
  local.multiply(x.data_ptr<float>(), x.size(1), y.data_ptr<float>(), /*accumulate=*/false);
  halo.multiply(h.data_ptr<float>(), x.size(1), y.data_ptr<float>(), /*accumulate=*/true);
  return y;
}

void expect_same(const SparseFeatures& a, const SparseFeatures& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  for (const auto& [x, y, what] : {std::tuple{&a.indptr, &b.indptr, "indptr"},
                                   {&a.indices, &b.indices, "indices"},
                                   {&a.t_indptr, &b.t_indptr, "t_indptr"},
                                   {&a.t_rows, &b.t_rows, "t_rows"},
                                   {&a.t_entries, &b.t_entries, "t_entries"}})
    EXPECT_TRUE(at::equal(*x, *y)) << what;
  // Bit for bit: the values' bits as integers.
  EXPECT_TRUE(at::equal(a.values.view(at::kInt), b.values.view(at::kInt))) << "values";
}

TEST(SparseProduct, IsTheDenseProductSparsifiedBitForBit) {
  std::mt19937 rng(7);
  for (const int64_t cols : {1, 7, 64, 300}) {
    const int64_t owned = 120, received = 40;
    const kernels::CsrMatrix a_local = random_block(owned, owned, 9, rng);
    const kernels::CsrMatrix a_halo = random_block(owned, received, 3, rng);
    const at::Tensor x = random_rows(owned, cols, 0.03, rng);
    const at::Tensor h = random_rows(received, cols, 0.03, rng);
    const std::optional<SparseFeatures> x_sparse = sparsify(x, 1.0);
    ASSERT_TRUE(x_sparse.has_value());
    const std::optional<SparseFeatures> want = sparsify(dense_product(a_local, x, a_halo, h), 1.0);
    const std::optional<SparseFeatures> got =
        sparse_product(view_of(a_local), *x_sparse, view_of(a_halo), h.data_ptr<float>(), 1.0);
    ASSERT_TRUE(want.has_value() && got.has_value()) << cols;
    EXPECT_GT(got->nnz(), 0) << cols;
    expect_same(*got, *want);
  }
}

TEST(SparseProduct, ASumThatCancelsIsNotStored) {
  // Row 0 adds x's row 0 once with weight 1 and once with weight -1 (through the halo block):
  // exactly zero, as in the dense product; row 1 keeps its one value.
  const at::Tensor x = at::tensor({1.5f, 0.0f, 0.0f, 2.0f}).reshape({2, 2});
  const at::Tensor h = at::tensor({1.5f, 0.0f}).reshape({1, 2});
  kernels::CsrMatrix a_local{2, 2, {0, 1, 2}, {0, 1}, {1.0f, 1.0f}};
  kernels::CsrMatrix a_halo{2, 1, {0, 1, 1}, {0}, {-1.0f}};
  const std::optional<SparseFeatures> got = sparse_product(
      view_of(a_local), *sparsify(x, 1.0), view_of(a_halo), h.data_ptr<float>(), 1.0);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(at::equal(got->indptr, at::tensor({0, 0, 1}, at::kLong)));
  EXPECT_TRUE(at::equal(got->indices, at::tensor({1}, at::kInt)));
  EXPECT_TRUE(at::equal(got->values, at::tensor({2.0f})));
}

TEST(SparseProduct, NoMatrixWhereTheDenseOneWouldStayDense) {
  std::mt19937 rng(3);
  const kernels::CsrMatrix a_local = random_block(50, 50, 10, rng);
  const kernels::CsrMatrix a_halo = random_block(50, 10, 2, rng);
  const at::Tensor x = random_rows(50, 20, 0.05, rng);
  const at::Tensor h = random_rows(10, 20, 0.05, rng);
  const SparseFeatures x_sparse = *sparsify(x, 1.0);
  const std::optional<SparseFeatures> all =
      sparse_product(view_of(a_local), x_sparse, view_of(a_halo), h.data_ptr<float>(), 1.0);
  ASSERT_TRUE(all.has_value());
  // Exactly the product's density is enough; a little less is not.
  const double density = all->density();
  EXPECT_TRUE(
      sparse_product(view_of(a_local), x_sparse, view_of(a_halo), h.data_ptr<float>(), density)
          .has_value());
  EXPECT_FALSE(sparse_product(view_of(a_local), x_sparse, view_of(a_halo), h.data_ptr<float>(),
                              density * 0.99)
                   .has_value());
  // A sum beyond float's range: infinite, where sparsify keeps the matrix dense.
  const at::Tensor big = at::full({1, 1}, std::numeric_limits<float>::max());
  kernels::CsrMatrix twice{1, 1, {0, 2}, {0, 0}, {1.0f, 1.0f}};
  kernels::CsrMatrix no_halo{1, 0, {0, 0}, {}, {}};
  EXPECT_FALSE(sparse_product(view_of(twice), *sparsify(big, 1.0), view_of(no_halo), nullptr, 1.0)
                   .has_value());
}

}  // namespace
}  // namespace adaqp
