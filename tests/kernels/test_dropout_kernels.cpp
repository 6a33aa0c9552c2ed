// Dropout kept as bits (kernels/dropout.h): the drawn bits against the definition (Philox blocks
// computed here one by one), keyed by global id wherever a row sits, and the masked rows and their
// gradients against a scalar reference, element for element; edge dropout's scales likewise,
// keyed by an edge's global ends.
#include "adaqp/kernels/dropout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "random_csr.h"

namespace adaqp::kernels {
namespace {

const Device kCpu = Device::cpu();

std::vector<uint32_t> keep_bits(const DropoutKey& key, float p, const std::vector<int64_t>& gids,
                                int64_t width) {
  const auto n = static_cast<int64_t>(gids.size());
  std::vector<uint32_t> bits(static_cast<size_t>(n * bit_words(width)), 0xDEADBEEFu);
  dropout_keep_bits(kCpu, key, p, gids.data(), n, width, bits.data());
  return bits;
}

bool bit(const std::vector<uint32_t>& bits, int64_t words, int64_t row, int64_t e) {
  return ((bits[static_cast<size_t>(row * words + e / 32)] >> (e % 32)) & 1u) != 0;
}

// The definition: element e of node g is kept when the uniform of word e % 4 of Philox block
// e / 4 is at least p.
bool kept_by_definition(const DropoutKey& key, float p, int64_t gid, int64_t e) {
  const PhiloxWords w = philox_block(key.seed, key.epoch, key.layer, RngStream::kDropout,
                                     static_cast<uint64_t>(gid), static_cast<uint32_t>(e / 4));
  return philox_uniform(w.v[e % 4]) >= p;
}

std::vector<float> random_rows(int64_t n, int64_t d, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n * d));
  for (float& v : x) v = dist(gen);
  return x;
}

TEST(DropoutKeepBits, FollowTheDefinitionAndLeavePaddingClear) {
  const DropoutKey key{42, 7, 1};
  std::vector<int64_t> gids = {0, 5, 1234567, (int64_t{1} << 39) + 3, 77};
  for (float p : {0.0f, 0.3f, 0.5f, 0.9f}) {
    for (int64_t width : {1, 4, 19, 31, 32, 33, 100, 256}) {
      const std::vector<uint32_t> bits = keep_bits(key, p, gids, width);
      const int64_t words = bit_words(width);
      for (size_t i = 0; i < gids.size(); ++i) {
        for (int64_t e = 0; e < words * 32; ++e) {
          const bool expected = e < width && kept_by_definition(key, p, gids[i], e);
          ASSERT_EQ(bit(bits, words, static_cast<int64_t>(i), e), expected)
              << "p " << p << " width " << width << " gid " << gids[i] << " element " << e;
        }
      }
    }
  }
}

TEST(DropoutKeepBits, SameGlobalIdGivesSameRowWhereverItSits) {
  const DropoutKey key{42, 7, 1};
  const int64_t width = 45, words = bit_words(width);
  std::vector<int64_t> all(500);
  std::iota(all.begin(), all.end(), 0);
  const std::vector<uint32_t> whole = keep_bits(key, 0.5f, all, width);
  // Two "parts" in a scrambled order, as workers would hold them.
  std::vector<int64_t> even, odd;
  for (int64_t g = 499; g >= 0; --g) (g % 2 == 0 ? even : odd).push_back(g);
  for (const auto* part : {&even, &odd}) {
    const std::vector<uint32_t> bits = keep_bits(key, 0.5f, *part, width);
    for (size_t i = 0; i < part->size(); ++i) {
      for (int64_t w = 0; w < words; ++w) {
        ASSERT_EQ(bits[i * words + w], whole[(*part)[i] * words + w]) << "gid " << (*part)[i];
      }
    }
  }
}

TEST(DropoutKeepBits, DropRateAndKeys) {
  std::vector<int64_t> gids(2000);
  std::iota(gids.begin(), gids.end(), 1000000);
  const int64_t width = 50, words = bit_words(width);
  const auto count_kept = [&](const std::vector<uint32_t>& bits) {
    int64_t kept = 0;
    for (int64_t i = 0; i < 2000; ++i)
      for (int64_t e = 0; e < width; ++e) kept += bit(bits, words, i, e);
    return kept;
  };
  // 100000 Bernoulli(0.7) draws: the standard deviation of the rate is 0.0015.
  const std::vector<uint32_t> base = keep_bits(DropoutKey{5, 3, 1}, 0.3f, gids, width);
  EXPECT_NEAR(static_cast<double>(count_kept(base)) / 100000.0, 0.7, 0.01);
  EXPECT_EQ(count_kept(keep_bits(DropoutKey{5, 3, 1}, 0.0f, gids, width)), 100000);
  EXPECT_EQ(keep_bits(DropoutKey{5, 3, 1}, 0.3f, gids, width), base);
  for (const DropoutKey& other : {DropoutKey{5, 4, 1}, DropoutKey{5, 3, 2}, DropoutKey{6, 3, 1}}) {
    const std::vector<uint32_t> bits = keep_bits(other, 0.3f, gids, width);
    int64_t differ = 0;
    for (int64_t i = 0; i < 2000; ++i)
      for (int64_t e = 0; e < width; ++e)
        differ += bit(bits, words, i, e) != bit(base, words, i, e);
    // Independent masks differ in 2 * 0.3 * 0.7 = 42% of the elements.
    EXPECT_NEAR(static_cast<double>(differ) / 100000.0, 0.42, 0.02);
  }
  EXPECT_THROW(keep_bits(DropoutKey{}, 1.0f, gids, width), InvariantError);
}

// Edge dropout scales for the edges dst[e] <- src[e] over rows numbered by `gids` (destinations
// by `dst_gids` when given).
std::vector<float> edge_scale(const DropoutKey& key, float p, const std::vector<int64_t>& dst,
                              const std::vector<int64_t>& src, const std::vector<int64_t>& gids,
                              int64_t heads, const std::vector<int64_t>* dst_gids = nullptr) {
  std::vector<float> scale(dst.size() * static_cast<size_t>(heads), -1.0f);
  edge_dropout_scale(kCpu, key, p, dst.data(), src.data(), static_cast<int64_t>(dst.size()),
                     (dst_gids != nullptr ? *dst_gids : gids).data(), gids.data(), heads,
                     scale.data());
  return scale;
}

// The definition: head k of the edge g_src -> g_dst is kept when the uniform of word k % 4 of
// the edge's Philox block k / 4 is at least p; destinations and sources numbered apart.
TEST(EdgeDropoutScale, FollowsTheDefinition) {
  const DropoutKey key{42, 7, 1};
  const std::vector<int64_t> gids = {0, 5, 1234567, (int64_t{1} << 39) + 3, 77};
  const std::vector<int64_t> dst_gids = {9, 0, (int64_t{1} << 38) + 1, 5, 31};
  std::vector<int64_t> dst, src;
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      dst.push_back(i);
      src.push_back(j);
    }
  }
  for (float p : {0.0f, 0.3f, 0.6f}) {
    for (int64_t heads : {1, 3, 4, 8, 9}) {
      const std::vector<float> scale = edge_scale(key, p, dst, src, gids, heads, &dst_gids);
      for (size_t e = 0; e < dst.size(); ++e) {
        for (int64_t k = 0; k < heads; ++k) {
          const PhiloxWords w = philox_edge_block(
              key.seed, key.epoch, key.layer, static_cast<uint64_t>(dst_gids[dst[e]]),
              static_cast<uint64_t>(gids[src[e]]), static_cast<uint32_t>(k / 4));
          const float expected = philox_uniform(w.v[k % 4]) >= p ? 1.0f / (1.0f - p) : 0.0f;
          ASSERT_EQ(scale[e * heads + k], expected) << "p " << p << " edge " << e << " head " << k;
        }
      }
    }
  }
}

// The counter layout (common/philox.h), built here word by word, and its separation from the
// other streams: another head block, the high bytes of either end, or a node counter with the
// same low words draw other words.
TEST(EdgeDropoutScale, CounterLayout) {
  const uint64_t seed = 0x0123456789ABCDEFull, dst = (uint64_t{0x5A} << 32) | 0x11111111u,
                 src = (uint64_t{0xC3} << 32) | 0x22222222u;
  const uint32_t epoch = 0x00ABCDEFu, layer = 3, block = 7;
  const PhiloxWords expected = philox4x32_10(
      PhiloxWords{{0x22222222u, 0x11111111u, 0xC3u | (0x5Au << 8) | (3u << 16) | (5u << 24),
                   0x00ABCDEFu | (7u << 24)}},
      0x89ABCDEFu, 0x01234567u);
  const PhiloxWords got = philox_edge_block(seed, epoch, layer, dst, src, block);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(got.v[j], expected.v[j]) << "word " << j;
  const auto differs = [&](const PhiloxWords& other) {
    for (int j = 0; j < 4; ++j) {
      if (other.v[j] != got.v[j]) return true;
    }
    return false;
  };
  EXPECT_TRUE(differs(philox_edge_block(seed, epoch, layer, dst, src, block + 1)));
  EXPECT_TRUE(
      differs(philox_edge_block(seed, epoch, layer, dst ^ (uint64_t{1} << 33), src, block)));
  EXPECT_TRUE(
      differs(philox_edge_block(seed, epoch, layer, dst, src ^ (uint64_t{1} << 33), block)));
  EXPECT_TRUE(differs(philox_edge_block(seed, epoch, layer, src, dst, block)));
  EXPECT_TRUE(differs(philox_block(seed, epoch, layer, RngStream::kDropout, src, block)));
}

// An edge's draws depend on its global ends, neither on where its rows sit nor on its direction.
TEST(EdgeDropoutScale, SameEndsGiveTheSameMaskWhereverTheRowsSit) {
  const DropoutKey key{3, 2, 1};
  const int64_t heads = 6;
  const std::vector<int64_t> gids = {10, 20, 30, 40};
  const std::vector<int64_t> dst = {0, 1, 2, 3, 0}, src = {1, 2, 3, 0, 2};
  const std::vector<float> whole = edge_scale(key, 0.5f, dst, src, gids, heads);
  // The rows in another order (as another worker numbers them), the edges reversed in order.
  const std::vector<int64_t> moved = {40, 30, 20, 10};  // row r holds gids[3 - r]
  std::vector<int64_t> dst2, src2;
  for (size_t e = dst.size(); e-- > 0;) {
    dst2.push_back(3 - dst[e]);
    src2.push_back(3 - src[e]);
  }
  const std::vector<float> other = edge_scale(key, 0.5f, dst2, src2, moved, heads);
  int64_t reversed_differ = 0;
  const std::vector<float> reversed = edge_scale(key, 0.5f, src, dst, gids, heads);
  for (size_t e = 0; e < dst.size(); ++e) {
    for (int64_t k = 0; k < heads; ++k) {
      ASSERT_EQ(other[(dst.size() - 1 - e) * heads + k], whole[e * heads + k]) << e << " " << k;
      reversed_differ += reversed[e * heads + k] != whole[e * heads + k];
    }
  }
  EXPECT_GT(reversed_differ, 0) << "j -> i and i -> j are different edges";
}

TEST(EdgeDropoutScale, DropRateKeysAndLimits) {
  // 20,000 edges x 5 heads: the standard deviation of the kept rate is 0.0015.
  std::vector<int64_t> dst, src, gids(400);
  std::iota(gids.begin(), gids.end(), 5000000);
  for (int64_t i = 0; i < 400; ++i) {
    for (int64_t j = 0; j < 50; ++j) {
      dst.push_back(i);
      src.push_back((i * 7 + j * 13) % 400);
    }
  }
  const int64_t heads = 5;
  const std::vector<float> base = edge_scale(DropoutKey{5, 3, 1}, 0.6f, dst, src, gids, heads);
  const auto kept = [](const std::vector<float>& s) {
    return static_cast<double>(std::count_if(s.begin(), s.end(), [](float v) { return v > 0; })) /
           static_cast<double>(s.size());
  };
  EXPECT_NEAR(kept(base), 0.4, 0.01);
  EXPECT_EQ(kept(edge_scale(DropoutKey{5, 3, 1}, 0.0f, dst, src, gids, heads)), 1.0);
  for (const DropoutKey& other : {DropoutKey{5, 4, 1}, DropoutKey{5, 3, 2}, DropoutKey{6, 3, 1}}) {
    const std::vector<float> s = edge_scale(other, 0.6f, dst, src, gids, heads);
    int64_t differ = 0;
    for (size_t i = 0; i < s.size(); ++i) differ += (s[i] > 0) != (base[i] > 0);
    // Independent masks differ in 2 * 0.6 * 0.4 = 48% of the weights.
    EXPECT_NEAR(static_cast<double>(differ) / static_cast<double>(s.size()), 0.48, 0.02);
  }
  EXPECT_THROW(edge_scale(DropoutKey{}, 1.0f, dst, src, gids, heads), InvariantError);
  EXPECT_THROW(edge_scale(DropoutKey{}, 0.5f, dst, src, gids, 1025), InvariantError);
  EXPECT_THROW(edge_scale(DropoutKey{0, 1u << 24, 0}, 0.5f, dst, src, gids, 1), InvariantError);
}

// The scalar reference of apply_mask: f(x) * (kept ? scale : 0).
float reference(float x, bool relu, bool kept, float scale) {
  const float v = relu ? (x > 0.0f || std::isnan(x) ? x : 0.0f) : x;
  return v * (kept ? scale : 0.0f);
}

struct MaskCase {
  int64_t d;
  int64_t offset;  // into mask rows of width offset + d
};

class ApplyMask : public ::testing::TestWithParam<MaskCase> {};

TEST_P(ApplyMask, MatchesTheReferenceElementForElement) {
  const auto [d, offset] = GetParam();
  const int64_t n = 300, width = offset + d, words = bit_words(width);
  std::vector<int64_t> gids(n);
  std::iota(gids.begin(), gids.end(), 17);
  const float p = 0.4f, scale = 1.0f / (1.0f - p);
  const std::vector<uint32_t> bits = keep_bits(DropoutKey{3, 2, 1}, p, gids, width);
  MaskView mask{bits.data(), words, offset, scale};
  std::vector<float> x = random_rows(n, d, 9);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[5] = -0.0f;
  x[7] = 0.0f;
  const std::vector<float> dy = random_rows(n, d, 10);
  for (bool relu : {false, true}) {
    std::vector<float> out(x.size());
    std::vector<uint32_t> positive(static_cast<size_t>(n * bit_words(d)), 0xFFFFFFFFu);
    apply_mask(kCpu, x.data(), n, d, mask, relu, out.data(), positive.data());
    std::vector<float> dx(x.size());
    apply_mask_backward(kCpu, dy.data(), n, d, mask, relu ? positive.data() : nullptr, dx.data());
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t e = 0; e < d; ++e) {
        const size_t k = static_cast<size_t>(i * d + e);
        const bool kept = bit(bits, words, i, offset + e);
        const float want = reference(x[k], relu, kept, scale);
        ASSERT_EQ(std::memcmp(&out[k], &want, sizeof(float)), 0)
            << "row " << i << " element " << e << ": " << out[k] << " vs " << want;
        const bool pos = x[k] > 0.0f;
        ASSERT_EQ(bit(positive, bit_words(d), i, e), pos) << "row " << i << " element " << e;
        const float grad = !relu || pos ? dy[k] * (kept ? scale : 0.0f) : 0.0f;
        ASSERT_EQ(std::memcmp(&dx[k], &grad, sizeof(float)), 0) << "row " << i << " element " << e;
      }
    }
    // In place gives the same rows.
    std::vector<float> in_place = x;
    apply_mask(kCpu, in_place.data(), n, d, mask, relu, in_place.data(), nullptr);
    ASSERT_EQ(std::memcmp(in_place.data(), out.data(), out.size() * sizeof(float)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ApplyMask,
                         ::testing::Values(MaskCase{1, 0}, MaskCase{19, 0}, MaskCase{64, 0},
                                           MaskCase{100, 0}, MaskCase{100, 100}, MaskCase{33, 7},
                                           MaskCase{32, 32}),
                         [](const auto& info) {
                           return "d" + std::to_string(info.param.d) + "_offset" +
                                  std::to_string(info.param.offset);
                         });

TEST(ApplyMask, WithoutBitsKeepsEverything) {
  const int64_t n = 40, d = 37;
  const std::vector<float> x = random_rows(n, d, 3);
  std::vector<float> out(x.size());
  std::vector<uint32_t> positive(static_cast<size_t>(n * bit_words(d)));
  apply_mask(kCpu, x.data(), n, d, MaskView{}, /*relu=*/true, out.data(), positive.data());
  for (size_t k = 0; k < x.size(); ++k) ASSERT_EQ(out[k], x[k] > 0 ? x[k] : 0.0f);
  std::vector<float> dx(x.size());
  apply_mask_backward(kCpu, x.data(), n, d, MaskView{}, positive.data(), dx.data());
  EXPECT_EQ(dx, out);  // ReLU's gradient of x is x where x > 0
}

using test::random_csr;

// The entry bits of a sparse matrix follow the dense definition at each entry (column c being
// element offset + c), for chunks of words that start mid-row, empty rows and a last partial word
// (whose unused bits stay clear).
TEST(SparseKeepBits, FollowTheDefinitionAtEveryEntry) {
  const CsrMatrix a = random_csr(2000, 300, 0.3, 13);  // ~120,000 entries: several chunks
  std::vector<int64_t> gids(static_cast<size_t>(a.rows));
  for (int64_t i = 0; i < a.rows; ++i) gids[i] = 7 * i + (int64_t{1} << 35);
  const auto nnz = static_cast<int64_t>(a.values.size());
  ASSERT_NE(nnz % 32, 0);
  for (const auto& [p, offset] : {std::pair{0.0f, 0}, std::pair{0.3f, 0}, std::pair{0.5f, 5}}) {
    const DropoutKey key{8, 3, 0};
    std::vector<uint32_t> keep(static_cast<size_t>(bit_words(nnz)), 0xDEADBEEFu);
    sparse_keep_bits(kCpu, key, p, a.view(), nnz, gids.data(), offset, keep.data());
    int64_t kept = 0;
    for (int64_t i = 0; i < a.rows; ++i) {
      for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
        const bool want = kept_by_definition(key, p, gids[i], offset + a.indices[k]);
        ASSERT_EQ(bit(keep, 0, 0, k), want)
            << "p " << p << " offset " << offset << " entry " << k << " row " << i;
        kept += want ? 1 : 0;
      }
    }
    EXPECT_EQ(keep.back() >> (nnz % 32), 0u) << "bits past the last entry";
    EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(nnz), 1.0 - p, 0.01);
  }
}

// The transpose of a as a walk over a's entries: (indptr, rows) and each entry's position in a.
struct TransposedWalk {
  std::vector<int64_t> indptr;
  std::vector<int32_t> rows, entries;
};

TransposedWalk transposed_walk(const CsrMatrix& a) {
  TransposedWalk t;
  t.indptr.assign(static_cast<size_t>(a.cols) + 1, 0);
  for (int32_t c : a.indices) ++t.indptr[static_cast<size_t>(c) + 1];
  for (int64_t c = 0; c < a.cols; ++c) t.indptr[c + 1] += t.indptr[c];
  t.rows.resize(a.indices.size());
  t.entries.resize(a.indices.size());
  std::vector<int64_t> next(t.indptr.begin(), t.indptr.end() - 1);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const int64_t at = next[a.indices[k]]++;
      t.rows[at] = static_cast<int32_t>(i);
      t.entries[at] = static_cast<int32_t>(k);
    }
  }
  return t;
}

// (a * mask) x, or with `transposed` (a * mask)^T x, from a's entries one by one in double (entry
// k kept when bit k is set); also the sum of the terms' magnitudes per output element.
std::vector<double> masked_product(const CsrMatrix& a, const std::vector<uint32_t>& keep,
                                   float scale, bool transposed, const std::vector<float>& x,
                                   int64_t d, std::vector<double>* magnitude) {
  const int64_t out_rows = transposed ? a.cols : a.rows;
  std::vector<double> y(static_cast<size_t>(out_rows * d), 0.0);
  magnitude->assign(y.size(), 0.0);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      if (!bit(keep, 0, 0, k)) continue;
      const int64_t c = a.indices[k];
      const double w = static_cast<double>(a.values[k]) * scale;
      const int64_t out = transposed ? c : i, in = transposed ? i : c;
      for (int64_t e = 0; e < d; ++e) {
        y[out * d + e] += w * x[in * d + e];
        (*magnitude)[out * d + e] += std::abs(w * x[in * d + e]);
      }
    }
  }
  return y;
}

// Layer 0 over a sparse A X: the product and its weight gradient (the transposed walk, which reads
// values and bits through `entries`), against the masked matrix's products entry by entry.
TEST(MaskedSpmm, BothWaysMatchTheMaskedMatrixEntryByEntry) {
  const int64_t rows = 300, cols = 70, d = 19;
  const CsrMatrix a = random_csr(rows, cols, 0.2, 11);
  const TransposedWalk t = transposed_walk(a);
  const auto nnz = static_cast<int64_t>(a.values.size());
  std::vector<int64_t> gids(static_cast<size_t>(rows));
  std::iota(gids.begin(), gids.end(), 1000);
  for (float p : {0.0f, 0.5f}) {
    std::vector<uint32_t> keep(static_cast<size_t>(bit_words(nnz)));
    sparse_keep_bits(kCpu, DropoutKey{3, 2, 0}, p, a.view(), nnz, gids.data(), 0, keep.data());
    const float scale = 1.0f / (1.0f - p);
    for (bool transposed : {false, true}) {
      const CsrView m = transposed
                            ? CsrView{cols, rows, t.indptr.data(), t.rows.data(), a.values.data()}
                            : a.view();
      const std::vector<float> x = random_rows(m.cols, d, 4);
      std::vector<float> y(static_cast<size_t>(m.rows * d), 9.0f);
      masked_spmm(kCpu, m, keep.data(), scale, transposed ? t.entries.data() : nullptr, x.data(), d,
                  y.data());
      std::vector<double> magnitude;
      const std::vector<double> want = masked_product(a, keep, scale, transposed, x, d, &magnitude);
      for (size_t k = 0; k < y.size(); ++k) {
        ASSERT_NEAR(y[k], want[k], 1e-6 * magnitude[k] + 1e-30)
            << "p " << p << " transposed " << transposed << " element " << k;
      }
      if (!transposed) {
        for (int64_t e = 0; e < d; ++e) ASSERT_EQ(y[3 * d + e], 0.0f) << "an empty row";
      }
    }
  }
}

// The first entry whose bit is `set`.
int64_t entry_with_bit(const std::vector<uint32_t>& keep, int64_t nnz, bool set) {
  for (int64_t k = 0; k < nnz; ++k) {
    if (bit(keep, 0, 0, k) == set) return k;
  }
  ADAQP_CHECK(false, "no entry with that bit");
  return -1;
}

// Every split of a row into the vectorised path's column blocks (64, 32, 16, 8, the masked tail):
// the same float multiplies and adds, in the row's stored order and with dropped entries skipped,
// as the plain loop written here.
TEST(MaskedSpmm, EqualsTheStoredOrderSumBitForBitAtEveryColumnBlock) {
  CsrMatrix a = random_csr(37, 53, 0.3, 21);
  const TransposedWalk t = transposed_walk(a);
  const auto nnz = static_cast<int64_t>(a.values.size());
  std::vector<int64_t> gids(static_cast<size_t>(a.rows));
  std::iota(gids.begin(), gids.end(), 50);
  std::vector<uint32_t> keep(static_cast<size_t>(bit_words(nnz)));
  sparse_keep_bits(kCpu, DropoutKey{5, 1, 0}, 0.5f, a.view(), nnz, gids.data(), 0, keep.data());
  const float scale = 2.0f;
  // Entries that add nothing: a dropped one, and a kept one of value zero.
  const int64_t dropped = entry_with_bit(keep, nnz, false), zero = entry_with_bit(keep, nnz, true);
  a.values[static_cast<size_t>(zero)] = 0.0f;
  for (int64_t d : {1, 5, 8, 9, 16, 24, 31, 32, 47, 56, 63, 64, 65, 100, 127, 128, 200}) {
    for (bool transposed : {false, true}) {
      const CsrView m =
          transposed ? CsrView{a.cols, a.rows, t.indptr.data(), t.rows.data(), a.values.data()}
                     : a.view();
      const int32_t* entries = transposed ? t.entries.data() : nullptr;
      std::vector<float> x = random_rows(m.cols, d, static_cast<uint32_t>(30 + d));
      // An infinity in the row of x each of them would multiply: skipped, they add nothing (0 * inf
      // would be NaN).
      for (const int64_t k : {dropped, zero}) {
        const int64_t inf_row = transposed ? std::upper_bound(a.indptr.begin(), a.indptr.end(), k) -
                                                 a.indptr.begin() - 1
                                           : a.indices[k];
        x[static_cast<size_t>(inf_row * d)] = std::numeric_limits<float>::infinity();
      }
      std::vector<float> want(static_cast<size_t>(m.rows * d), 0.0f);
      for (int64_t i = 0; i < m.rows; ++i) {
        for (int64_t j = m.indptr[i]; j < m.indptr[i + 1]; ++j) {
          const int64_t k = entries != nullptr ? entries[j] : j;
          const float w = a.values[k] * (bit(keep, 0, 0, k) ? scale : 0.0f);
          if (w == 0.0f) continue;
          for (int64_t c = 0; c < d; ++c) want[i * d + c] += w * x[m.indices[j] * d + c];
        }
      }
      std::vector<float> y(want.size(), 7.0f);
      masked_spmm(kCpu, m, keep.data(), scale, entries, x.data(), d, y.data());
      ASSERT_EQ(y, want) << "d " << d << " transposed " << transposed;
      ASSERT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return !std::isnan(v); }))
          << "d " << d << " transposed " << transposed;
    }
  }
}

TEST(MaskedSpmm, WithoutBitsIsTheSparseProduct) {
  const CsrMatrix a = random_csr(50, 40, 0.3, 12);
  const int64_t d = 9;
  const std::vector<float> x = random_rows(a.cols, d, 5);
  std::vector<float> y(static_cast<size_t>(a.rows * d)), want(y.size());
  masked_spmm(kCpu, a.view(), nullptr, 1.0f, nullptr, x.data(), d, y.data());
  spmm_cpu(a.view(), x.data(), d, want.data(), /*accumulate=*/false);
  EXPECT_EQ(y, want);
}

#if !ADAQP_WITH_CUDA
TEST(ApplyMask, ACudaDeviceIsAnErrorWithoutCuda) {
  float x = 1.0f;
  EXPECT_THROW(apply_mask(Device::cuda(0), &x, 1, 1, MaskView{}, false, &x, nullptr), ConfigError);
}
#endif

}  // namespace
}  // namespace adaqp::kernels
