// distributed_roc_auc under mpirun at 1..4 ranks: every split's mean over tasks equals the mean of
// the per-task pairwise counts over all ranks' rows computed in one place, however the rows are
// dealt among the ranks (some ranks without rows of a split), with fewer tasks than ranks, and a
// task without a positive in a split left out of that split's mean; defined_tasks counts the same
// tasks from the labels alone.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "adaqp/train/roc_auc.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

struct Rows {
  std::vector<float> scores;
  std::vector<uint8_t> labels;
  std::array<std::vector<int64_t>, 3> split;
};

// Global row g's score and label of task t, from the row and task alone: every rank draws the
// same. Scores on a grid of 9 values (ties across ranks); task 1 has no positive outside the
// training split.
float score_of(int64_t g, int64_t t) {
  return static_cast<float>((g * 7 + t * 3) % 9) - 4.f;
}
uint8_t label_of(int64_t g, int64_t t, int split) {
  if (t == 1 && split != 0) return 0;
  return static_cast<uint8_t>((g * 13 + t * 5 + (g * g) % 11) % 4 == 0);
}
int split_of(int64_t g) {
  return g % 5 < 3 ? 0 : g % 5 == 3 ? 1 : 2;
}

// This rank's rows of `n` global rows dealt in blocks of 7 round robin (rank 0 gets the first
// block: with n < 7 * world some ranks hold none).
Rows my_rows(int64_t n, int64_t tasks, int rank, int world) {
  Rows r;
  for (int64_t g = 0; g < n; ++g) {
    if ((g / 7) % world != rank) continue;
    const int split = split_of(g);
    r.split[split].push_back(static_cast<int64_t>(r.scores.size() / tasks));
    for (int64_t t = 0; t < tasks; ++t) {
      r.scores.push_back(score_of(g, t));
      r.labels.push_back(label_of(g, t, split));
    }
  }
  return r;
}

// The split's mean over defined tasks by counting pairs over every global row.
double pairwise_mean(int64_t n, int64_t tasks, int split, int64_t* defined) {
  double sum = 0;
  *defined = 0;
  for (int64_t t = 0; t < tasks; ++t) {
    double right = 0;
    int64_t pairs = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (split_of(i) != split || label_of(i, t, split) == 0) continue;
      for (int64_t j = 0; j < n; ++j) {
        if (split_of(j) != split || label_of(j, t, split) != 0) continue;
        const float a = score_of(i, t), b = score_of(j, t);
        right += a > b ? 1.0 : a == b ? 0.5 : 0.0;
        ++pairs;
      }
    }
    if (pairs == 0) continue;
    sum += right / static_cast<double>(pairs);
    ++*defined;
  }
  return *defined > 0 ? sum / static_cast<double>(*defined) : 0.0;
}

void expect_matches(int64_t n, int64_t tasks) {
  auto comm = test::world_comm();
  const Rows r = my_rows(n, tasks, comm->rank(), comm->size());
  const RocAucSums sums = distributed_roc_auc(*comm, r.scores.data(), r.labels.data(),
                                              static_cast<int64_t>(r.scores.size()) / tasks, tasks,
                                              {&r.split[0], &r.split[1], &r.split[2]});
  // The defined tasks from the labels alone (before any score): start-up's check.
  const std::array<int64_t, 3> from_labels =
      defined_tasks(*comm, r.labels.data(), tasks, {&r.split[0], &r.split[1], &r.split[2]});
  for (int k = 0; k < 3; ++k) {
    int64_t defined = 0;
    const double expected = pairwise_mean(n, tasks, k, &defined);
    EXPECT_EQ(sums.tasks[k], defined) << "split " << k;
    EXPECT_EQ(from_labels[k], defined) << "split " << k;
    EXPECT_NEAR(sums.mean(k), expected, 1e-12) << "split " << k;
    // Task 1 has no positive outside training: left out there, so the count itself is checked.
    if (k > 0 && tasks > 1) {
      EXPECT_EQ(defined, tasks - 1) << "split " << k;
    }
  }
}

TEST(DistributedRocAuc, EqualsThePairwiseCountOverAllRows) {
  expect_matches(400, 5);
}

TEST(DistributedRocAuc, FewerTasksThanRanksAndRanksWithoutRows) {
  expect_matches(12, 1);  // 12 rows: two blocks, so ranks 2 and 3 hold none
  expect_matches(60, 2);  // task 1 defined in the training split only
}

}  // namespace
}  // namespace adaqp
