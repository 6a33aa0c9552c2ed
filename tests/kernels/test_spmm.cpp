// The CPU CSR kernels against a dense reference computed in double precision, and their row
// routine's two paths against each other.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../src/kernels/csr_row_product.h"
#include "adaqp/common/cpu_features.h"
#include "adaqp/kernels/spmm.h"
#include "random_csr.h"
#include "test_util.h"

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

// A zero weight still multiplies its row: 0 * inf is NaN, on every column block's path.
TEST(Spmm, AZeroWeightTimesInfinityIsNan) {
  const int64_t indptr[] = {0, 2};
  const int32_t indices[] = {0, 1};
  const float values[] = {1.0f, 0.0f};
  const CsrView a{1, 2, indptr, indices, values};
  for (int64_t d : {3, 8, 64, 75}) {
    std::vector<float> x(static_cast<size_t>(2 * d), 1.0f);
    x[static_cast<size_t>(d + d - 1)] = std::numeric_limits<float>::infinity();
    std::vector<float> y(static_cast<size_t>(d), 5.0f);
    spmm_cpu(a, x.data(), d, y.data(), /*accumulate=*/false);
    for (int64_t c = 0; c + 1 < d; ++c) ASSERT_EQ(y[c], 1.0f) << "d " << d << " column " << c;
    EXPECT_TRUE(std::isnan(y[d - 1])) << "d " << d;
  }
}

// The row routine's entry-by-entry path and its vector paths (where the CPU has them) give the same
// bits, NaN included, with zero weights multiplied or skipped; the CSR products reach only the
// widest path a CPU has, so this is where the others are tested on an AVX2 or AVX-512 machine.
template <bool Skip>
struct TestRow {
  struct Cursor {
    const TestRow& row;
    int64_t j, end;
    bool next(int64_t& column, float& weight) {
      for (; j < end; ++j) {
        if (Skip && row.weights[j] == 0.0f) continue;
        column = row.columns[j];
        weight = row.weights[j++];
        return true;
      }
      return false;
    }
  };
  const int32_t* columns;
  const float* weights;
  Cursor entries(int64_t begin, int64_t end) const { return Cursor{*this, begin, end}; }
};

#if ADAQP_X86_PATHS
// `path`: the vector path against the entry-by-entry one; widths cross each block size of both
// (8 to 64 columns a block with AVX2, 16 to 256 with AVX-512) and their tails.
template <bool Skip, class Path>
void expect_paths_agree(Path path) {
  const int64_t cols = 13, entries = 40;
  std::mt19937 rng(7);
  std::vector<int32_t> columns(entries);
  std::vector<float> weights(entries);
  for (int64_t j = 0; j < entries; ++j) {
    columns[j] = static_cast<int32_t>(rng() % cols);
    weights[j] = j % 5 == 0 ? 0.0f : std::uniform_real_distribution<float>(-1, 1)(rng);
  }
  columns[0] = cols - 1;  // a zero weight on the row holding an infinity
  const TestRow<Skip> row{columns.data(), weights.data()};
  for (int64_t d :
       {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65, 100, 128, 130, 255, 256, 257, 300, 512, 529}) {
    std::vector<float> x = random_values(cols * d, 60 + d);
    x[static_cast<size_t>((cols - 1) * d)] = std::numeric_limits<float>::infinity();
    for (bool accumulate : {false, true}) {
      std::vector<float> scalar = random_values(d, 90 + d), vector = scalar;
      detail::row_product(row, 0, entries, x.data(), d, scalar.data(), accumulate);
      path(row, 0, entries, x.data(), d, vector.data(), accumulate);
      EXPECT_EQ(std::memcmp(scalar.data(), vector.data(), sizeof(float) * d), 0)
          << "d " << d << " accumulate " << accumulate;
      EXPECT_EQ(std::isnan(scalar[0]), !Skip)
          << "d " << d << ": 0 * inf " << (Skip ? "skipped" : "multiplied");
    }
  }
}
#endif

TEST(CsrRowProduct, EntryByEntryAndAvx2GiveTheSameBits) {
#if ADAQP_X86_PATHS
  if (!cpu_supports(CpuIsa::kAvx2)) {
    if (test::running_in_ci()) FAIL() << "no AVX2 on this CPU: the AVX2 path cannot run";
    GTEST_SKIP() << "no AVX2 on this CPU: only the entry-by-entry path runs";
  }
  expect_paths_agree<false>([](auto&&... a) { detail::row_product_avx2(a...); });
  expect_paths_agree<true>([](auto&&... a) { detail::row_product_avx2(a...); });
#else
  GTEST_SKIP() << "not an x86 build: only the entry-by-entry path exists";
#endif
}

// As for AVX2; a CPU without AVX-512 (the CI machine's CPU is not chosen) skips, as a machine
// without a GPU skips the CUDA kernels' tests.
TEST(CsrRowProduct, EntryByEntryAndAvx512GiveTheSameBits) {
#if ADAQP_X86_PATHS
  if (!cpu_supports(CpuIsa::kAvx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  expect_paths_agree<false>([](auto&&... a) { detail::row_product_avx512(a...); });
  expect_paths_agree<true>([](auto&&... a) { detail::row_product_avx512(a...); });
#else
  GTEST_SKIP() << "not an x86 build: only the entry-by-entry path exists";
#endif
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

// The transpose's values on a symmetric pattern with repeated entries (a multigraph's edges): the
// r-th copy of (i, j) takes the r-th copy of (j, i); a pattern whose copies differ in number is not
// symmetric, nor is a non-square one.
TEST(SpmmTranspose, ValuesOnThePatternPairRepeatedEntriesInOrder) {
  const std::vector<int64_t> indptr{0, 3, 5, 6};
  const std::vector<int32_t> indices{1, 1, 2, 0, 0, 0};
  const std::vector<float> values{1, 2, 3, 4, 5, 6};
  const CsrView a{3, 3, indptr.data(), indices.data(), values.data()};
  std::vector<float> t;
  ASSERT_TRUE(transpose_values_on_pattern(a, &t));
  EXPECT_EQ(t, (std::vector<float>{4, 5, 6, 1, 2, 3}));
  EXPECT_EQ(t, transpose_csr(a).values);
  // (0, 1) twice, (1, 0) once.
  const std::vector<int64_t> uneven_indptr{0, 2, 3};
  const std::vector<int32_t> uneven_indices{1, 1, 0};
  const CsrView uneven{2, 2, uneven_indptr.data(), uneven_indices.data(), values.data()};
  std::vector<float> untouched{7};
  EXPECT_FALSE(transpose_values_on_pattern(uneven, &untouched));
  EXPECT_EQ(untouched, std::vector<float>{7});
  const CsrView wide{3, 4, indptr.data(), indices.data(), values.data()};
  EXPECT_FALSE(transpose_values_on_pattern(wide, &untouched));
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
