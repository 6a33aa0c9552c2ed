// One task's ROC-AUC: hand-computed cases (ties, signed zeros, infinities, negative scores), the
// undefined cases, and random scores with many ties against a count over every (positive,
// negative) pair.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "adaqp/train/roc_auc.h"

namespace adaqp {
namespace {

std::optional<double> auc_of(const std::vector<float>& scores, const std::vector<int>& labels) {
  std::vector<uint64_t> pairs;
  for (size_t i = 0; i < scores.size(); ++i) pairs.push_back(scored_label(scores[i], labels[i]));
  std::vector<uint64_t> scratch;
  return roc_auc(pairs, scratch);
}

// The definition: over every (positive, negative) pair, 1 when the positive scores higher, 1/2
// for a tie.
double pairwise_auc(const std::vector<float>& scores, const std::vector<int>& labels) {
  double right = 0;
  int64_t pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (labels[i] == 0) continue;
    for (size_t j = 0; j < scores.size(); ++j) {
      if (labels[j] != 0) continue;
      right += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
      ++pairs;
    }
  }
  return right / static_cast<double>(pairs);
}

TEST(RocAuc, HandComputedCases) {
  // scikit-learn's documented example: 3 of the 4 pairs ordered right.
  EXPECT_DOUBLE_EQ(*auc_of({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(*auc_of({0.5f, 0.5f, 0.5f, 0.5f}, {0, 1, 0, 1}), 0.5);
  // The positive of score 1 ties the negative (1/2), the one of score 2 beats it (1).
  EXPECT_DOUBLE_EQ(*auc_of({1.f, 1.f, 2.f}, {0, 1, 1}), 0.75);
  EXPECT_DOUBLE_EQ(*auc_of({-2.f, -1.f, 0.5f}, {0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(*auc_of({-2.f, -1.f, 0.5f}, {1, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(*auc_of({-1.f, -2.f}, {1, 0}), 1.0);
  // -0 and +0 are one score: a tie.
  EXPECT_DOUBLE_EQ(*auc_of({-0.0f, 0.0f}, {1, 0}), 0.5);
  EXPECT_DOUBLE_EQ(*auc_of({0.0f, -0.0f}, {1, 0}), 0.5);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_DOUBLE_EQ(*auc_of({-inf, -1e30f, 1e-40f, inf}, {0, 0, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(*auc_of({inf, -inf}, {0, 1}), 0.0);
  // Every NaN, whatever its sign and payload (x86's 0/0 is negative, CUDA's positive), is one
  // score below every number.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_DOUBLE_EQ(*auc_of({nan, -inf}, {1, 0}), 0.0);
  EXPECT_DOUBLE_EQ(*auc_of({-nan, 0.f}, {0, 1}), 1.0);
  EXPECT_DOUBLE_EQ(*auc_of({nan, -nan}, {1, 0}), 0.5);
}

TEST(RocAuc, UndefinedWithoutBothClasses) {
  EXPECT_FALSE(auc_of({}, {}).has_value());
  EXPECT_FALSE(auc_of({0.1f, 0.9f}, {1, 1}).has_value());
  EXPECT_FALSE(auc_of({0.1f, 0.9f}, {0, 0}).has_value());
}

TEST(RocAuc, RandomScoresWithTiesMatchThePairwiseCount) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 300);
    // Few distinct scores (many ties) in some trials, float noise of both signs in others.
    const int levels = trial % 2 == 0 ? 1 + static_cast<int>(rng() % 6) : 0;
    std::normal_distribution<float> noise(0.f, 3.f);
    std::vector<float> scores(n);
    std::vector<int> labels(n);
    for (int i = 0; i < n; ++i) {
      scores[i] =
          levels > 0 ? static_cast<float>(static_cast<int>(rng() % levels)) - 2.f : noise(rng);
      labels[i] = static_cast<int>(rng() % 3 == 0);
    }
    labels[0] = 1;
    labels[1] = 0;
    EXPECT_NEAR(*auc_of(scores, labels), pairwise_auc(scores, labels), 1e-12)
        << "trial " << trial << ", " << n << " scores";
  }
}

}  // namespace
}  // namespace adaqp
