// A random sparse matrix for the kernel tests: entries uniform in [-1, 1) at density p, with every
// row i % 7 == 3 and every column j % 5 == 2 empty. Shared by the kernels and model tests.
#pragma once

#include <cstdint>
#include <random>

#include "adaqp/kernels/spmm.h"

namespace adaqp::test {

inline kernels::CsrMatrix random_csr(int64_t rows, int64_t cols, double p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  kernels::CsrMatrix a;
  a.rows = rows;
  a.cols = cols;
  a.indptr.push_back(0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (i % 7 == 3 || j % 5 == 2 || u(rng) >= p) continue;
      a.indices.push_back(static_cast<int32_t>(j));
      a.values.push_back(static_cast<float>(u(rng) * 2.0 - 1.0));
    }
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  return a;
}

}  // namespace adaqp::test
