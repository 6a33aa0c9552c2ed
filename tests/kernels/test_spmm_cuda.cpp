// The GPU SpMM (both algorithms) against the CPU reference spmm_cpu: every output element within
// the float summation bound, for widths below, at and above one warp pass, with empty rows, rows
// longer than a warp's load, overwrite and accumulate. Skipped, with the reason, without CUDA or a
// device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/config.h"
#include "adaqp/kernels/spmm.h"

#if ADAQP_WITH_CUDA
#include <cuda_runtime.h>

#include "adaqp/kernels/cuda_device.h"
#include "adaqp/kernels/cuda_support.h"
#include "adaqp/kernels/spmm_cuda.h"
#include "cuda_skip.h"
#endif

namespace adaqp::kernels {
namespace {

#if ADAQP_WITH_CUDA

template <typename T>
using DeviceArray = cuda::DeviceBuffer<T>;

// Rows of 0..69 entries (row 3 empty, row 5 with 300 entries), random columns and weights.
CsrMatrix random_csr(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> col(0, static_cast<int32_t>(cols - 1));
  std::uniform_int_distribution<int> degree(0, 69);
  std::uniform_real_distribution<float> weight(-1.0f, 1.0f);
  CsrMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.indptr.push_back(0);
  for (int64_t i = 0; i < rows; ++i) {
    const int n = i == 3 ? 0 : i == 5 ? 300 : degree(gen);
    for (int k = 0; k < n; ++k) {
      a.indices.push_back(col(gen));
      a.values.push_back(weight(gen));
    }
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  return a;
}

std::vector<float> random_dense(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = dist(gen);
  return x;
}

// Largest |gpu - cpu| / bound over all elements, where the bound is the float summation error of
// either order: (entries + 2) * 2^-22 * (sum of |terms|, including the accumulated start value).
double worst_error_ratio(const CsrMatrix& a, const std::vector<float>& x, int64_t d,
                         const std::vector<float>& start, bool accumulate,
                         const std::vector<float>& cpu, const std::vector<float>& gpu) {
  double worst = 0.0;
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t c = 0; c < d; ++c) {
      const size_t at = static_cast<size_t>(i * d + c);
      double magnitude = accumulate ? std::fabs(start[at]) : 0.0;
      for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k)
        magnitude += std::fabs(static_cast<double>(a.values[k]) *
                               x[static_cast<size_t>(a.indices[k] * d + c)]);
      const double bound =
          static_cast<double>(a.indptr[i + 1] - a.indptr[i] + 2) * std::ldexp(1.0, -22) * magnitude;
      if (!std::isfinite(gpu[at])) return HUGE_VAL;
      const double diff = std::fabs(static_cast<double>(gpu[at]) - cpu[at]);
      if (diff == 0.0) continue;
      worst = std::max(worst, bound > 0.0 ? diff / bound : HUGE_VAL);
    }
  }
  return worst;
}

// plan's y = a . x (or y += a . x) on random x and start values against spmm_cpu, within the
// summation bound. Without accumulation y is output only: NaN there must not reach the result.
void expect_matches_cpu(CudaSpmm& plan, const CsrMatrix& a, int64_t d, bool accumulate,
                        uint32_t x_seed, uint32_t y_seed) {
  const std::vector<float> x = random_dense(a.cols * d, x_seed);
  const std::vector<float> start =
      accumulate ? random_dense(a.rows * d, y_seed) : std::vector<float>(a.rows * d, NAN);
  std::vector<float> cpu = start;
  spmm_cpu(a.view(), x.data(), d, cpu.data(), accumulate);
  DeviceArray<float> x_dev(x);
  DeviceArray<float> y_dev(start);
  plan.multiply(x_dev.get(), d, y_dev.get(), accumulate, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_LE(worst_error_ratio(a, x, d, start, accumulate, cpu, y_dev.download()), 1.0);
}

class SpmmCuda : public ::testing::TestWithParam<CudaSpmmAlgorithm> {
 protected:
  void SetUp() override { ADAQP_REQUIRE_CUDA_DEVICE(); }
};

TEST_P(SpmmCuda, MatchesCpuReference) {
  const CsrMatrix a = random_csr(517, 389, 11);
  DeviceArray<int64_t> indptr(a.indptr);
  DeviceArray<int32_t> indices(a.indices);
  DeviceArray<float> values(a.values);
  CudaSpmm plan(CsrView{a.rows, a.cols, indptr.get(), indices.get(), values.get()}, GetParam());
  EXPECT_EQ(plan.algorithm(), GetParam());
  for (int64_t d : {1, 31, 64, 129, 300}) {
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE("d = " + std::to_string(d) + ", accumulate = " + std::to_string(accumulate));
      expect_matches_cpu(plan, a, d, accumulate, 23, 37);
    }
  }
}

TEST_P(SpmmCuda, EmptyMatrixWritesZerosOrKeepsY) {
  CsrMatrix a;
  a.rows = 7;
  a.cols = 5;
  a.indptr.assign(8, 0);
  a.indices.push_back(0);  // keeps the device arrays non-empty; no row refers to it
  a.values.push_back(1.0f);
  DeviceArray<int64_t> indptr(a.indptr);
  DeviceArray<int32_t> indices(a.indices);
  DeviceArray<float> values(a.values);
  CudaSpmm plan(CsrView{a.rows, a.cols, indptr.get(), indices.get(), values.get()}, GetParam());
  const int64_t d = 40;
  DeviceArray<float> x(std::vector<float>(static_cast<size_t>(a.cols * d), 1.0f));
  const std::vector<float> start(static_cast<size_t>(a.rows * d), 3.5f);
  DeviceArray<float> y(start);
  plan.multiply(x.get(), d, y.get(), true, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(y.download(), start);
  plan.multiply(x.get(), d, y.get(), false, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(y.download(), std::vector<float>(start.size(), 0.0f));
}

// cuSPARSE's plan in several row blocks (row_blocks) gives the one-block result.
TEST(SpmmCudaBlocks, CusparseInRowBlocksMatchesCpuReference) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const CsrMatrix a = random_csr(517, 389, 13);
  DeviceArray<int64_t> indptr(a.indptr);
  DeviceArray<int32_t> indices(a.indices);
  DeviceArray<float> values(a.values);
  // Row 5 has 300 entries: blocks of 300 to 2000 entries, several rows each.
  for (int64_t block : {300, 777, 2000}) {
    CudaSpmm plan(CsrView{a.rows, a.cols, indptr.get(), indices.get(), values.get()},
                  CudaSpmmAlgorithm::kCusparse, block);
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE("block " + std::to_string(block) + ", accumulate " + std::to_string(accumulate));
      expect_matches_cpu(plan, a, 40, accumulate, 29, 31);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, SpmmCuda,
                         ::testing::Values(CudaSpmmAlgorithm::kCusparse,
                                           CudaSpmmAlgorithm::kRowWarp),
                         [](const ::testing::TestParamInfo<CudaSpmmAlgorithm>& info) {
                           return std::string(to_string(info.param));
                         });

#else

TEST(SpmmCuda, RequiresCudaBuild) {
  GTEST_SKIP() << "built without CUDA (ADAQP_WITH_CUDA=0)";
}

#endif

// The row blocks of the cuSPARSE plan (CPU code): consecutive, within both limits, each as long as
// the limits allow, and an over-long row refused.
TEST(RowBlocks, CutGreedilyWithinBothLimits) {
  // Rows of 3, 0, 5, 2, 2, 7 and 1 entries.
  const std::vector<int64_t> indptr = {0, 3, 3, 8, 10, 12, 19, 20};
  const int64_t rows = 7;
  EXPECT_EQ(row_blocks(indptr.data(), rows, 100, 100), (std::vector<int64_t>{0, 7}));
  EXPECT_EQ(row_blocks(indptr.data(), rows, 8, 100), (std::vector<int64_t>{0, 3, 5, 7}));
  EXPECT_EQ(row_blocks(indptr.data(), rows, 9, 2), (std::vector<int64_t>{0, 2, 4, 6, 7}));
  EXPECT_EQ(row_blocks(indptr.data(), 0, 1, 1), (std::vector<int64_t>{0}));
  EXPECT_THROW(row_blocks(indptr.data(), rows, 6, 100), InvariantError);
  // A matrix of more entries than 32-bit offsets hold, cut into blocks that fit.
  std::vector<int64_t> big = {0};
  for (int i = 0; i < 5; ++i) big.push_back(big.back() + (int64_t{1} << 30));
  const std::vector<int64_t> cut = row_blocks(big.data(), 5, INT32_MAX, INT32_MAX - 1);
  EXPECT_EQ(cut, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace adaqp::kernels
