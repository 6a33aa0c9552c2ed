#include "part_features.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <utility>

namespace adaqp {
namespace {

constexpr const char* kDense = "features";
constexpr const char* kIndptr = "feature_indptr";
constexpr const char* kColumns = "feature_columns";
constexpr const char* kValues = "feature_values";

bool stored(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits != 0;
}

}  // namespace

std::optional<FeatureCsr> smaller_as_csr(const float* base, const int64_t* row_ids, int64_t rows,
                                         int64_t dim) {
  const auto row = [&](int64_t i) { return base + (row_ids == nullptr ? i : row_ids[i]) * dim; };
  int64_t nonzero = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const float* x = row(i);
    for (int64_t j = 0; j < dim; ++j) nonzero += stored(x[j]) ? 1 : 0;
  }
  // CSR costs 8 bytes a stored value (column and value) and 8 a row; dense 4 a value.
  if (8 * nonzero + 8 * (rows + 1) >= 4 * rows * dim) return std::nullopt;
  FeatureCsr csr;
  csr.indptr.reserve(static_cast<size_t>(rows) + 1);
  csr.columns.reserve(static_cast<size_t>(nonzero));
  csr.values.reserve(static_cast<size_t>(nonzero));
  csr.indptr.push_back(0);
  for (int64_t i = 0; i < rows; ++i) {
    const float* x = row(i);
    for (int64_t j = 0; j < dim; ++j) {
      if (!stored(x[j])) continue;
      csr.columns.push_back(static_cast<int32_t>(j));
      csr.values.push_back(x[j]);
    }
    csr.indptr.push_back(static_cast<int64_t>(csr.columns.size()));
  }
  return csr;
}

void add_part_features(ArrayFileWriter& w, const Part& p) {
  if (p.feature_csr) {
    w.add_view(kIndptr, p.feature_csr->indptr);
    w.add_view(kColumns, p.feature_csr->columns);
    w.add_view(kValues, p.feature_csr->values);
    return;
  }
  std::optional<FeatureCsr> csr =
      smaller_as_csr(p.features.data(), nullptr, p.num_owned(), p.feat_dim);
  if (!csr) {
    w.add_view(kDense, p.features);
    return;
  }
  w.add(kIndptr, std::move(csr->indptr));
  w.add(kColumns, std::move(csr->columns));
  w.add(kValues, std::move(csr->values));
}

void read_part_features(ArrayFileReader& in, const PartChecker& check, Part& p) {
  const int64_t rows = p.num_owned(), dim = p.feat_dim;
  // `value`, element `at` of the dense rows, is finite (else one error naming array `array`).
  const auto finite = [&](const char* array, int64_t at, float value) {
    if (!std::isfinite(value))
      check.fail(array, fmt::format("node {} (global id {}), element {} is {}", at / dim,
                                    p.owned_gid[static_cast<size_t>(at / dim)], at % dim, value));
  };
  const bool sparse = in.has(kIndptr) || in.has(kColumns) || in.has(kValues);
  if (!sparse) {
    p.features = in.take<float>(kDense);
    check.size(kDense, p.features.size(), rows * dim);
    for (size_t k = 0; k < p.features.size(); ++k)
      finite(kDense, static_cast<int64_t>(k), p.features[k]);
    return;
  }
  check.require(!in.has(kDense), kDense,
                fmt::format("present beside {}, {} or {}: a part holds its features one way",
                            kIndptr, kColumns, kValues));
  FeatureCsr csr{in.take<int64_t>(kIndptr), in.take<int32_t>(kColumns), in.take<float>(kValues)};
  check.offsets(kIndptr, csr.indptr, rows, static_cast<int64_t>(csr.columns.size()));
  check.size(kValues, csr.values.size(), static_cast<int64_t>(csr.columns.size()));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t e = csr.indptr[i]; e < csr.indptr[i + 1]; ++e) {
      const int32_t j = csr.columns[e];
      if (j < 0 || j >= dim)
        check.fail(kColumns,
                   fmt::format("entry {} = {} (row {}) is outside [0, {})", e, j, i, dim));
      if (e > csr.indptr[i] && j <= csr.columns[e - 1])
        check.fail(kColumns, fmt::format("entry {} = {} does not ascend within row {} (after {})",
                                         e, j, i, csr.columns[e - 1]));
      finite(kValues, i * dim + j, csr.values[e]);
    }
  }
  p.features.clear();
  p.feature_csr = std::move(csr);
}

}  // namespace adaqp
