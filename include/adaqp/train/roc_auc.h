// ROC-AUC of multi-label predictions, as OGB's Evaluator scores ogbn-proteins: each task (label
// column) whose labels over a split hold both a positive and a negative gets the area under its ROC
// curve, the probability that a random positive scores above a random negative (ties count half);
// the split's score is the mean over those tasks.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "adaqp/comm/communicator.h"

namespace adaqp {

// A (score, label) pair as one sortable word: the score's bits mapped to an unsigned integer of the
// same order (-0 and +0 one score; every NaN one score below every number, the same on every
// device), shifted left by one, the label (0 or 1) in the lowest bit.
uint64_t scored_label(float score, bool positive);

// One task's ROC-AUC over `pairs` (scored_label words; sorted by score in place, `scratch` the
// sort's second buffer); nullopt when they hold no positive or no negative.
std::optional<double> roc_auc(std::vector<uint64_t>& pairs, std::vector<uint64_t>& scratch);

// Per split (train, valid, test): the sum of the defined tasks' ROC-AUCs and their count, over all
// ranks (identical on every rank).
struct RocAucSums {
  std::array<double, 3> sum{};
  std::array<int64_t, 3> tasks{};
  // The split's mean over its defined tasks; 0 where no task is defined (as accuracy is 0 for an
  // empty split).
  double mean(int split) const;
};

// Collective. `scores` and `labels` are this rank's rows (num_rows x num_tasks, row-major; labels
// 0/1); split_rows[k] lists the rows of split k. Task t is scored by rank t % world, which
// receives every rank's pairs of it: each rank sends 8 bytes per split row and task, and a rank's
// threads (OpenMP) score its tasks, each holding one task's pairs at a time beside what it
// received.
RocAucSums distributed_roc_auc(Communicator& comm, const float* scores, const uint8_t* labels,
                               int64_t num_rows, int64_t num_tasks,
                               const std::array<const std::vector<int64_t>*, 3>& split_rows);

// Collective. Per split, how many of the tasks hold both a positive and a negative over all ranks'
// rows of it: those a split's ROC-AUC is the mean of (`labels`, `split_rows` as above).
std::array<int64_t, 3> defined_tasks(Communicator& comm, const uint8_t* labels, int64_t num_tasks,
                                     const std::array<const std::vector<int64_t>*, 3>& split_rows);

}  // namespace adaqp
