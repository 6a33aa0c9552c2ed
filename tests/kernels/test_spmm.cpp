// The CPU CSR kernels against a dense reference computed in double precision.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdint>
#include <random>
#include <vector>

#include "adaqp/kernels/spmm.h"
#include "random_csr.h"

namespace adaqp::kernels {
namespace {

using test::random_csr;

std::vector<double> dense(const CsrView& a) {
  std::vector<double> m(static_cast<size_t>(a.rows * a.cols), 0.0);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k)
      m[i * a.cols + a.indices[k]] += a.values[k];
  }
  return m;
}

std::vector<float> random_values(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// Checks y == init + a . x (init all zero unless accumulating) to 1e-5.
void expect_product(const CsrView& a, const std::vector<float>& x, int64_t d,
                    const std::vector<float>& init, const std::vector<float>& y) {
  const std::vector<double> m = dense(a);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t c = 0; c < d; ++c) {
      double ref = init.empty() ? 0.0 : init[i * d + c];
      for (int64_t j = 0; j < a.cols; ++j) ref += m[i * a.cols + j] * x[j * d + c];
      ASSERT_NEAR(y[i * d + c], ref, 1e-5) << "row " << i << " column " << c << " d " << d;
    }
  }
}

TEST(Spmm, MatchesDenseProductForSeveralWidths) {
  const CsrMatrix a = random_csr(53, 41, 0.2, 1);
  for (int64_t d : {1, 3, 16, 37, 64}) {
    const std::vector<float> x = random_values(a.cols * d, 10 + d);
    std::vector<float> y(static_cast<size_t>(a.rows * d), 123.0f);
    spmm_cpu(a.view(), x.data(), d, y.data(), /*accumulate=*/false);
    expect_product(a.view(), x, d, {}, y);
  }
}

TEST(Spmm, AccumulatesIntoOutput) {
  const CsrMatrix a = random_csr(30, 45, 0.3, 2);
  const int64_t d = 9;
  const std::vector<float> x = random_values(a.cols * d, 3);
  const std::vector<float> init = random_values(a.rows * d, 4);
  std::vector<float> y = init;
  spmm_cpu(a.view(), x.data(), d, y.data(), /*accumulate=*/true);
  expect_product(a.view(), x, d, init, y);
}

TEST(Spmm, LargeProductUsesThreadsAndStaysExact) {
  // Large enough to take the parallel path, run on 4 threads whatever OMP_NUM_THREADS says (ctest
  // sets 1): equal to the single-row-at-a-time reference and bit-identical to one thread's.
  const CsrMatrix a = random_csr(700, 500, 0.05, 5);
  const int64_t d = 32;
  const std::vector<float> x = random_values(a.cols * d, 6);
  std::vector<float> one(static_cast<size_t>(a.rows * d)), four(one.size());
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  spmm_cpu(a.view(), x.data(), d, one.data(), false);
  omp_set_num_threads(4);
  int used = 0;
#pragma omp parallel
  {
#pragma omp single
    used = omp_get_num_threads();
  }
  spmm_cpu(a.view(), x.data(), d, four.data(), false);
  omp_set_num_threads(threads);
  EXPECT_EQ(used, 4);
  expect_product(a.view(), x, d, {}, four);
  EXPECT_EQ(four, one);
}

// y_i (or 0) plus w_k x_{j_k} in the row's stored order, one float multiply and one float add each
// (x86-64's baseline has no fused multiply-add to contract them into).
std::vector<float> stored_order_product(const CsrView& a, const std::vector<float>& x, int64_t d,
                                        const std::vector<float>& init) {
  std::vector<float> y = init.empty() ? std::vector<float>(a.rows * d, 0.0f) : init;
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      for (int64_t c = 0; c < d; ++c) y[i * d + c] += a.values[k] * x[a.indices[k] * d + c];
    }
  }
  return y;
}

TEST(Spmm, EqualsTheStoredOrderSumBitForBitAtEveryColumnBlock) {
  // Every split of the row into the vectorised path's blocks of 64, 32, 16 and 8 columns and its
  // masked tail, accumulating or not: the same float operations in the same order.
  const CsrMatrix a = random_csr(37, 53, 0.3, 11);
  for (int64_t d : {1, 5, 8, 9, 16, 24, 31, 32, 47, 56, 63, 64, 65, 100, 127, 128, 200, 256}) {
    const std::vector<float> x = random_values(a.cols * d, 20 + d);
    const std::vector<float> init = random_values(a.rows * d, 40 + d);
    std::vector<float> y(static_cast<size_t>(a.rows * d), 5.0f);
    spmm_cpu(a.view(), x.data(), d, y.data(), /*accumulate=*/false);
    EXPECT_EQ(y, stored_order_product(a.view(), x, d, {})) << "d " << d;
    y = init;
    spmm_cpu(a.view(), x.data(), d, y.data(), /*accumulate=*/true);
    EXPECT_EQ(y, stored_order_product(a.view(), x, d, init)) << "d " << d << ", accumulating";
  }
}

TEST(Spmm, EmptyMatrixGivesZeros) {
  CsrMatrix a;
  a.rows = 4;
  a.cols = 3;
  a.indptr.assign(5, 0);
  const std::vector<float> x(6, 1.0f);
  std::vector<float> y(8, 7.0f);
  spmm_cpu(a.view(), x.data(), 2, y.data(), false);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(SpmmTranspose, IsTheDenseTransposeWithRowsInOrder) {
  const CsrMatrix a = random_csr(47, 29, 0.25, 7);
  const CsrMatrix t = transpose_csr(a.view());
  ASSERT_EQ(t.rows, a.cols);
  ASSERT_EQ(t.cols, a.rows);
  ASSERT_EQ(t.indices.size(), a.indices.size());
  const std::vector<double> m = dense(a.view()), mt = dense(t.view());
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) ASSERT_EQ(mt[j * a.rows + i], m[i * a.cols + j]);
  }
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t k = t.indptr[r] + 1; k < t.indptr[r + 1]; ++k) {
      EXPECT_LT(t.indices[k - 1], t.indices[k]) << "row " << r;
    }
  }
}

TEST(SpmmTranspose, TransposedProductMatchesDense) {
  const CsrMatrix a = random_csr(64, 80, 0.1, 8);
  const CsrMatrix t = transpose_csr(a.view());
  const int64_t d = 13;
  const std::vector<float> g = random_values(a.rows * d, 9);
  std::vector<float> y(static_cast<size_t>(t.rows * d));
  spmm_cpu(t.view(), g.data(), d, y.data(), false);
  expect_product(t.view(), g, d, {}, y);
  // Transposing twice gives back the original entries in the same order.
  const CsrMatrix back = transpose_csr(t.view());
  EXPECT_EQ(back.indptr, a.indptr);
  EXPECT_EQ(back.indices, a.indices);
  EXPECT_EQ(back.values, a.values);
}

}  // namespace
}  // namespace adaqp::kernels
