// The fast solver. For a fixed time budget tau every channel is an independent multiple-choice
// knapsack of capacity (tau - alpha) / beta bytes. Each group's options (bit-widths) are reduced
// to the lower convex hull of (bytes, variance), so its upgrade steps have decreasing variance
// gain per byte and the greedy by gain per byte is optimal up to one item per channel. The steps of
// each channel are sorted once. The objective of the greedy prefixes can change only at the
// breakpoints (a channel's time after one of its steps); a sweep evaluates it at every breakpoint,
// skipping whole budget intervals whose lower bound (the variance at the interval's end with the
// time at its start) cannot beat a known objective. The best budget is then filled greedily,
// skipping steps that do not fit and taking later ones that do.
// Distributed use: a rank builds a BudgetSolver over its own outgoing messages only (the channels
// of different ranks are disjoint under the per-link and per-sender models). The ranks agree on
// the budget by exchanging scalars (combined bounds, prefix variances at candidate budgets); given
// the agreed budget, assign() needs no information from other ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/assign/problem.h"

namespace adaqp::assign {

class BudgetSolver {
 public:
  // An empty solver (no channels): build() before use.
  BudgetSolver();
  // build(problem, group_size).
  BudgetSolver(const AssignProblem& problem, int group_size);
  ~BudgetSolver();
  BudgetSolver(BudgetSolver&&) noexcept;
  BudgetSolver& operator=(BudgetSolver&&) noexcept;

  // Sorts every channel's upgrade steps: O(n log n) by radix sort, n = number of groups.
  // `problem` must be valid (validate()); group_size >= 1 (solve.h). Groups of zero weight never
  // leave the smallest bit-width. Replaces what an earlier build held, reusing its memory (a
  // solver re-built every epoch allocates only when its problem grows).
  void build(const AssignProblem& problem, int group_size);

  // The budget in [max(bounds.tmin, Tmin of this problem), Tmax] whose greedy prefix assignment has
  // the lowest normalised objective under `bounds`; the smallest such budget on ties.
  double best_budget(double lambda, const ObjectiveBounds& bounds) const;

  // The variance when every channel takes the longest prefix of its greedy order that fits in tau:
  // what best_budget() trades against tau. Summed over ranks it gives the global prefix variance at
  // a common budget. O(channels * log n).
  double prefix_variance(double tau) const;

  // The greedy assignment with every channel's time <= tau (a channel whose smallest bit-widths
  // already exceed tau stays at them): one bit-width per message, in input order.
  std::vector<uint8_t> assign(double tau) const;

 private:
  double time_after(size_t c, int64_t k) const;      // channel c's time after its first k steps
  int64_t steps_within(size_t c, double tau) const;  // its steps that fit in tau (a prefix)

  TimeModel time_;
  int64_t message_count_ = 0;
  std::vector<int> option_bits_;  // allowed bit-widths, ascending
  std::vector<uint8_t> hull_;     // option indices on the lower convex hull, ascending bytes
  struct Buffers;                 // the groups (messages of each) and build()'s working memory
  std::unique_ptr<Buffers> buffers_;
  std::vector<uint8_t> item_base_;  // option index of each group before any upgrade
  double base_variance_ = 0;
  // Per channel c: bytes at the base options and its steps [step_begin_[c], step_begin_[c + 1]).
  std::vector<int64_t> base_bytes_;
  std::vector<int64_t> step_begin_;
  // Per step, channel by channel in greedy order: the group, the hull position it upgrades to,
  // and the channel's cumulative bytes and variance gain once it is taken.
  std::vector<int32_t> step_item_;
  std::vector<uint8_t> step_hull_pos_;
  std::vector<int64_t> step_cum_bytes_;
  std::vector<double> step_cum_gain_;
};

}  // namespace adaqp::assign
