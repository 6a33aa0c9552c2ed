#include "adaqp/partition/edge_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace adaqp {
namespace {

using Arcs = std::set<std::pair<int64_t, int64_t>>;

// A random symmetric graph without self-loops whose degrees range from 0 to about 40.
Arcs random_symmetric_arcs(int64_t n) {
  std::mt19937_64 rng(11);
  Arcs arcs;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t tries = static_cast<int64_t>(rng() % 21);
    for (int64_t k = 0; k < tries; ++k) {
      const auto u = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      if (u == v) continue;
      arcs.emplace(v, u);
      arcs.emplace(u, v);
    }
  }
  return arcs;
}

template <class T>
void to_rows(const Arcs& arcs, int64_t n, std::vector<T>& indptr, std::vector<T>& indices) {
  indptr.assign(static_cast<size_t>(n) + 1, 0);
  indices.clear();
  for (const auto& [v, u] : arcs) {
    ++indptr[v + 1];
    indices.push_back(static_cast<T>(u));
  }
  for (int64_t v = 0; v < n; ++v) indptr[v + 1] += indptr[v];
}

template <class T>
Arcs from_rows(const std::vector<T>& indptr, const std::vector<T>& indices) {
  Arcs arcs;
  for (size_t v = 0; v + 1 < indptr.size(); ++v) {
    for (T e = indptr[v]; e < indptr[v + 1]; ++e) {
      if (e > indptr[v]) {
        EXPECT_LT(indices[e - 1], indices[e]) << "row " << v << " not sorted";
      }
      arcs.emplace(static_cast<int64_t>(v), indices[e]);
    }
  }
  return arcs;
}

// The definition, by brute force: each node's `degree` neighbours of smallest edge hash, and both
// directions of every edge an end chose.
Arcs expected_sample(const Arcs& arcs, int64_t n, int64_t degree, uint64_t seed) {
  std::vector<std::vector<std::pair<uint64_t, int64_t>>> rows(static_cast<size_t>(n));
  for (const auto& [v, u] : arcs) rows[v].emplace_back(edge_hash(v, u, seed), u);
  Arcs sample;
  for (int64_t v = 0; v < n; ++v) {
    std::sort(rows[v].begin(), rows[v].end());
    for (size_t k = 0; k < rows[v].size() && static_cast<int64_t>(k) < degree; ++k) {
      sample.emplace(v, rows[v][k].second);
      sample.emplace(rows[v][k].second, v);
    }
  }
  return sample;
}

template <class T>
Arcs sampled(const Arcs& arcs, int64_t n, int64_t degree, uint64_t seed) {
  std::vector<T> indptr, indices;
  to_rows(arcs, n, indptr, indices);
  sample_symmetric_rows(indptr, indices, degree, seed);
  EXPECT_EQ(indptr.front(), 0);
  EXPECT_EQ(static_cast<size_t>(indptr.back()), indices.size());
  return from_rows(indptr, indices);
}

TEST(EdgeSample, EdgeHashIsTheSameAtBothEnds) {
  EXPECT_EQ(edge_hash(3, 17, 9), edge_hash(17, 3, 9));
  EXPECT_NE(edge_hash(3, 17, 9), edge_hash(3, 17, 10));
  EXPECT_NE(edge_hash(3, 17, 9), edge_hash(3, 18, 9));
}

TEST(EdgeSample, RowSamplerKeepsTheSmallestHashes) {
  const std::vector<int32_t> row = {1, 4, 6, 9, 12, 20, 33};
  std::vector<std::pair<uint64_t, int64_t>> by_hash;
  for (int32_t u : row) by_hash.emplace_back(edge_hash(5, u, 2), u);
  std::sort(by_hash.begin(), by_hash.end());
  RowSampler sampler(3, 2);
  std::vector<int64_t> kept = sampler.keep(5, row.data(), row.data() + row.size());
  std::sort(kept.begin(), kept.end());
  std::vector<int64_t> expected = {by_hash[0].second, by_hash[1].second, by_hash[2].second};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(kept, expected);
  EXPECT_EQ(sampler.keep(5, row.data(), row.data() + 2).size(), 2u) << "a short row keeps all";
  EXPECT_TRUE(sampler.keep(5, row.data(), row.data()).empty());
}

TEST(EdgeSample, SymmetricRowsSampleIsTheDefinitionAtEitherIndexWidth) {
  const int64_t n = 400;
  const Arcs arcs = random_symmetric_arcs(n);
  for (const int64_t degree : {1, 3, 8}) {
    SCOPED_TRACE("degree " + std::to_string(degree));
    const Arcs expected = expected_sample(arcs, n, degree, 7);
    ASSERT_LT(expected.size(), arcs.size()) << "the sample must drop edges here";
    EXPECT_EQ(sampled<int32_t>(arcs, n, degree, 7), expected);
    EXPECT_EQ(sampled<int64_t>(arcs, n, degree, 7), expected);
    EXPECT_NE(sampled<int64_t>(arcs, n, degree, 8), expected) << "the seed changes nothing";
  }
  EXPECT_EQ(sampled<int32_t>(arcs, n, 1000, 7), arcs) << "rows within the degree stay whole";
}

}  // namespace
}  // namespace adaqp
