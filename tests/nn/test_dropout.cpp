// Dropout masks are keyed by global node id: independent of row position and partitioning.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "adaqp/model/dropout.h"

namespace adaqp {
namespace {

std::vector<float> mask_of(const DropoutKey& key, float p, const std::vector<int64_t>& gids,
                           int64_t width) {
  std::vector<float> m(gids.size() * static_cast<size_t>(width));
  dropout_mask(key, p, gids.data(), static_cast<int64_t>(gids.size()), width, m.data());
  return m;
}

TEST(DropoutMask, SameGlobalIdGivesSameRowWhereverItSits) {
  const DropoutKey key{42, 7, 1};
  const int64_t width = 19;  // not a multiple of 4
  std::vector<int64_t> all(500);
  std::iota(all.begin(), all.end(), 0);
  const std::vector<float> whole = mask_of(key, 0.5f, all, width);
  // Two "parts" in a scrambled order, as workers would hold them.
  std::vector<int64_t> even, odd;
  for (int64_t g = 499; g >= 0; --g) (g % 2 == 0 ? even : odd).push_back(g);
  for (const auto* part : {&even, &odd}) {
    const std::vector<float> m = mask_of(key, 0.5f, *part, width);
    for (size_t i = 0; i < part->size(); ++i) {
      for (int64_t e = 0; e < width; ++e) {
        ASSERT_EQ(m[i * width + e], whole[(*part)[i] * width + e])
            << "gid " << (*part)[i] << " element " << e;
      }
    }
  }
}

TEST(DropoutMask, ValuesAndDropRate) {
  const float p = 0.3f;
  std::vector<int64_t> gids(2000);
  std::iota(gids.begin(), gids.end(), 1000000);
  const std::vector<float> m = mask_of(DropoutKey{1, 0, 0}, p, gids, 50);
  const float keep = 1.0f / (1.0f - p);
  int64_t dropped = 0;
  for (float v : m) {
    ASSERT_TRUE(v == 0.0f || v == keep) << v;
    dropped += v == 0.0f;
  }
  // 100000 Bernoulli(0.3) draws: the standard deviation of the rate is 0.0015.
  const double rate = static_cast<double>(dropped) / static_cast<double>(m.size());
  EXPECT_NEAR(rate, p, 0.01);
}

TEST(DropoutMask, EpochLayerAndSeedChangeTheMask) {
  std::vector<int64_t> gids(200);
  std::iota(gids.begin(), gids.end(), 0);
  const std::vector<float> base = mask_of(DropoutKey{5, 3, 1}, 0.5f, gids, 16);
  for (const DropoutKey& other : {DropoutKey{5, 4, 1}, DropoutKey{5, 3, 2}, DropoutKey{6, 3, 1}}) {
    const std::vector<float> m = mask_of(other, 0.5f, gids, 16);
    int64_t differ = 0;
    for (size_t i = 0; i < m.size(); ++i) differ += m[i] != base[i];
    // Independent masks differ in about half of the 3200 elements.
    EXPECT_GT(differ, 1200);
    EXPECT_LT(differ, 2000);
  }
  EXPECT_EQ(mask_of(DropoutKey{5, 3, 1}, 0.5f, gids, 16), base);
}

TEST(DropoutMask, ZeroProbabilityKeepsEverything) {
  const std::vector<int64_t> gids = {3, 1, 4, 1, 5};
  const std::vector<float> m = mask_of(DropoutKey{9, 9, 9}, 0.0f, gids, 7);
  EXPECT_TRUE(std::all_of(m.begin(), m.end(), [](float v) { return v == 1.0f; }));
}

}  // namespace
}  // namespace adaqp
