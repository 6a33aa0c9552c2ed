#include "adaqp/assign/budget_solver.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <utility>

#include "groups.h"

namespace adaqp::assign {
namespace {

// Option indices on the lower convex hull of (bytes, variance factor), ascending bytes. Of options
// with equal bytes only the one of least variance can be optimal, and so can no option with more
// bytes and no less variance than one before it (full precision is fewer bytes than a codec width
// for a row of 1 or 2 values); a point above the chord of its neighbours is never the greedy's
// choice. Collinear points stay (their steps tie in gain per byte).
std::vector<uint8_t> lower_hull(const BitOptions& o) {
  std::vector<uint8_t> hull;
  for (size_t k = 0; k < o.size(); ++k) {
    if (k + 1 < o.size() && o.bytes[k + 1] == o.bytes[k]) continue;
    if (!hull.empty() && o.factor[k] >= o.factor[hull.back()]) continue;
    while (hull.size() >= 2) {
      const size_t a = hull[hull.size() - 2], b = hull.back();
      const double above =
          (o.factor[b] - o.factor[a]) * static_cast<double>(o.bytes[k] - o.bytes[a]) -
          (o.factor[k] - o.factor[a]) * static_cast<double>(o.bytes[b] - o.bytes[a]);
      if (above <= 0) break;
      hull.pop_back();
    }
    hull.push_back(static_cast<uint8_t>(k));
  }
  return hull;
}

// A group that gains from upgrades, as the sort and the merge read it (16 bytes: the sort moves
// them through cache, the merge reads them in order).
struct Candidate {
  uint64_t key;  // descending_key(weight per message)
  int32_t item;
  int32_t count;
};

// Stable sort of [first, last) by key, ascending. An LSD radix sort in 11-bit digits on the top 33
// bits only (sign, exponent and 20 bits of mantissa of a double's key: three passes instead of
// six), skipping passes on which all keys agree; keys that tie on those bits are then adjacent and
// in input order, and an insertion sort on the whole key puts them in exact order (it moves only
// within such ties, which are rare). `buffer` is scratch space.
void sort_by_key(Candidate* first, Candidate* last, std::vector<Candidate>& buffer) {
  constexpr int kBits = 11, kPasses = 3, kShift = 64 - kBits * kPasses, kBuckets = 1 << kBits;
  const size_t n = static_cast<size_t>(last - first);
  if (n < 2) return;
  std::array<size_t, kPasses * kBuckets> hist{};
  auto digit = [](uint64_t key, int p) { return (key >> (kShift + kBits * p)) & (kBuckets - 1); };
  for (const Candidate* c = first; c != last; ++c) {
    for (int p = 0; p < kPasses; ++p) ++hist[p * kBuckets + digit(c->key, p)];
  }
  buffer.resize(n);
  Candidate* from = first;
  Candidate* to = buffer.data();
  for (int p = 0; p < kPasses; ++p) {
    size_t* pos = hist.data() + p * kBuckets;
    if (pos[digit(first->key, p)] == n) continue;
    size_t sum = 0;
    for (int d = 0; d < kBuckets; ++d) sum += std::exchange(pos[d], sum);
    for (size_t i = 0; i < n; ++i) to[pos[digit(from[i].key, p)]++] = from[i];
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
  for (Candidate* c = first + 1; c != last; ++c) {
    if (c->key >= (c - 1)->key) continue;
    const Candidate moving = *c;
    Candidate* at = c;
    for (; at != first && moving.key < (at - 1)->key; --at) *at = *(at - 1);
    *at = moving;
  }
}

// A key whose ascending order is the descending order of a positive double, and back.
uint64_t descending_key(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return ~bits;
}

double key_value(uint64_t key) {
  const uint64_t bits = ~key;
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

}  // namespace

struct BudgetSolver::Buffers {
  Groups groups;
  std::vector<Candidate> candidates, sort_buffer;
  std::vector<int64_t> candidate_begin, fill;
};

BudgetSolver::BudgetSolver() : buffers_(std::make_unique<Buffers>()) {}

BudgetSolver::BudgetSolver(const AssignProblem& problem, int group_size) : BudgetSolver() {
  build(problem, group_size);
}

BudgetSolver::~BudgetSolver() = default;
BudgetSolver::BudgetSolver(BudgetSolver&&) noexcept = default;
BudgetSolver& BudgetSolver::operator=(BudgetSolver&&) noexcept = default;

void BudgetSolver::build(const AssignProblem& problem, int group_size) {
  time_ = problem.time;
  message_count_ = static_cast<int64_t>(problem.messages.size());
  const BitOptions opt = bit_options(problem);
  option_bits_ = opt.bits;
  hull_ = lower_hull(opt);
  Groups& groups = buffers_->groups;
  group_messages(problem, group_size, groups);
  const size_t items = groups.size();
  const size_t channels = time_.channels.size();

  // Base options, and the groups that can gain from an upgrade.
  item_base_.resize(items);
  base_bytes_.assign(channels, 0);
  base_variance_ = 0;
  std::vector<int64_t>& candidate_begin = buffers_->candidate_begin;
  candidate_begin.assign(channels + 1, 0);
  const bool upgrades = hull_.size() > 1;
  for (size_t i = 0; i < items; ++i) {
    item_base_[i] = groups.weight[i] > 0 ? hull_[0] : 0;
    base_bytes_[groups.channel[i]] += groups.count(i) * opt.bytes[item_base_[i]];
    base_variance_ += groups.weight[i] * opt.factor[item_base_[i]];
    if (upgrades && groups.weight[i] > 0) ++candidate_begin[groups.channel[i] + 1];
  }
  for (size_t c = 0; c < channels; ++c) candidate_begin[c + 1] += candidate_begin[c];
  // Gaining groups by channel (a stable scatter), then each channel's by descending density (ties:
  // group order).
  std::vector<Candidate>& candidates = buffers_->candidates;
  candidates.resize(static_cast<size_t>(candidate_begin[channels]));
  {
    std::vector<int64_t>& fill = buffers_->fill;
    fill.assign(candidate_begin.begin(), candidate_begin.end() - 1);
    for (size_t i = 0; i < items; ++i) {
      if (!upgrades || groups.weight[i] == 0) continue;
      const int32_t count = static_cast<int32_t>(groups.count(i));
      candidates[fill[groups.channel[i]]++] = {descending_key(groups.weight[i] / count),
                                               static_cast<int32_t>(i), count};
    }
  }
  for (size_t c = 0; c < channels; ++c) {
    sort_by_key(candidates.data() + candidate_begin[c], candidates.data() + candidate_begin[c + 1],
                buffers_->sort_buffer);
  }

  // Step k (1-based hull position) of group i gains density_i * count_i * gain_k (its weight times
  // gain_k, up to rounding) for count_i * bytes_k, so its gain per byte is density_i * rate_k with
  // rate_k decreasing in k: each channel's greedy order is the merge of one density-sorted sequence
  // per k (ties: lower k first).
  const size_t steps_per_group = hull_.size() - 1;
  std::vector<double> step_gain(steps_per_group + 1, 0), rate(steps_per_group + 1, 0);
  std::vector<int64_t> step_bytes(steps_per_group + 1, 0);
  for (size_t k = 1; k <= steps_per_group; ++k) {
    step_bytes[k] = opt.bytes[hull_[k]] - opt.bytes[hull_[k - 1]];
    step_gain[k] = opt.factor[hull_[k - 1]] - opt.factor[hull_[k]];
    rate[k] = step_gain[k] / static_cast<double>(step_bytes[k]);
  }
  const size_t total_steps = candidates.size() * steps_per_group;
  step_item_.resize(total_steps);
  step_hull_pos_.resize(total_steps);
  step_cum_bytes_.resize(total_steps);
  step_cum_gain_.resize(total_steps);
  step_begin_.assign(channels + 1, 0);
  // Per sequence k: its next candidate and that candidate's gain per byte (-1 once exhausted).
  std::vector<int64_t> head(steps_per_group + 1);
  std::vector<double> head_value(steps_per_group + 1);
  size_t s = 0;
  for (size_t c = 0; c < channels; ++c) {
    const int64_t lo = candidate_begin[c], hi = candidate_begin[c + 1];
    auto value_at = [&](size_t k) {
      return head[k] < hi ? key_value(candidates[head[k]].key) * rate[k] : -1.0;
    };
    for (size_t k = 1; k <= steps_per_group; ++k) {
      head[k] = lo;
      head_value[k] = value_at(k);
    }
    int64_t cum_bytes = 0;
    double cum_gain = 0;
    for (int64_t taken = 0; taken < (hi - lo) * static_cast<int64_t>(steps_per_group); ++taken) {
      size_t best = 1;
      for (size_t k = 2; k <= steps_per_group; ++k) {
        if (head_value[k] > head_value[best]) best = k;
      }
      const Candidate& g = candidates[head[best]++];
      head_value[best] = value_at(best);
      cum_bytes += g.count * step_bytes[best];
      cum_gain += key_value(g.key) * g.count * step_gain[best];
      step_item_[s] = g.item;
      step_hull_pos_[s] = static_cast<uint8_t>(best);
      step_cum_bytes_[s] = cum_bytes;
      step_cum_gain_[s] = cum_gain;
      ++s;
    }
    step_begin_[c + 1] = static_cast<int64_t>(s);
  }
}

double BudgetSolver::time_after(size_t c, int64_t k) const {
  const int64_t bytes = base_bytes_[c] + (k > 0 ? step_cum_bytes_[step_begin_[c] + k - 1] : 0);
  return time_.channel_time(static_cast<int32_t>(c), bytes);
}

int64_t BudgetSolver::steps_within(size_t c, double tau) const {
  int64_t lo = 0, hi = step_begin_[c + 1] - step_begin_[c];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (time_after(c, mid + 1) <= tau) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

double BudgetSolver::prefix_variance(double tau) const {
  double gain = 0;
  for (size_t c = 0; c + 1 < step_begin_.size(); ++c) {
    const int64_t k = steps_within(c, tau);
    if (k > 0) gain += step_cum_gain_[step_begin_[c] + k - 1];
  }
  return base_variance_ - gain;
}

double BudgetSolver::best_budget(double lambda, const ObjectiveBounds& bounds) const {
  const size_t channels = time_.channels.size();
  double start = bounds.tmin, end = 0;
  for (size_t c = 0; c < channels; ++c) {
    start = std::max(start, time_after(c, 0));
    end = std::max(end, time_after(c, step_begin_[c + 1] - step_begin_[c]));
  }
  end = std::max(end, start);
  // Without a time range (the hidden window holds every codec width) time does not count, and
  // there is no rate to price full precision's at: budgets beyond the window are not free.
  if (bounds.tmax <= bounds.tmin) end = start;

  // Cut [start, end] into intervals. The prefix variance does not grow with the budget and the
  // time term does not shrink, so no breakpoint in (lo, hi] beats lambda-term(V(hi)) +
  // time-term(lo): an interval whose bound exceeds a known objective is skipped unswept.
  constexpr int kIntervals = 256;
  std::vector<double> edge(kIntervals + 1), variance(kIntervals + 1);
  double threshold = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    edge[i] = i == kIntervals ? end : start + (end - start) * i / kIntervals;
    variance[i] = prefix_variance(edge[i]);
    const double objective = normalized_objective(bounds, lambda, variance[i], edge[i]);
    threshold = i == 0 ? objective : std::min(threshold, objective);
  }

  double best_tau = start;
  double best = normalized_objective(bounds, lambda, variance[0], start);
  std::vector<int64_t> taken(channels);
  using Event = std::pair<double, int32_t>;  // time of a channel's next step, channel
  const std::greater<Event> later;           // a min-heap on (time, channel)
  std::vector<Event> heap;
  for (int i = 0; i < kIntervals; ++i) {
    const double lo = edge[i], hi = edge[i + 1];
    if (hi == lo) continue;
    if (normalized_objective(bounds, lambda, variance[i + 1], lo) > std::min(threshold, best)) {
      continue;
    }
    // Sweep the breakpoints in (lo, hi] in time order.
    double gain = base_variance_ - variance[i];
    heap.clear();
    for (size_t c = 0; c < channels; ++c) {
      taken[c] = steps_within(c, lo);
      if (step_begin_[c] + taken[c] < step_begin_[c + 1]) {
        heap.emplace_back(time_after(c, taken[c] + 1), static_cast<int32_t>(c));
      }
    }
    std::make_heap(heap.begin(), heap.end(), later);
    while (!heap.empty() && heap.front().first <= hi) {
      std::pop_heap(heap.begin(), heap.end(), later);
      const auto [tau, c] = heap.back();
      heap.pop_back();
      const int64_t s = step_begin_[c] + taken[c];
      gain += step_cum_gain_[s] - (taken[c] > 0 ? step_cum_gain_[s - 1] : 0);
      ++taken[c];
      if (s + 1 < step_begin_[c + 1]) {
        heap.emplace_back(time_after(c, taken[c] + 1), c);
        std::push_heap(heap.begin(), heap.end(), later);
      }
      if (!heap.empty() && heap.front().first == tau) continue;  // more steps end at this time
      const double objective = normalized_objective(bounds, lambda, base_variance_ - gain, tau);
      if (objective < best) {
        best = objective;
        best_tau = tau;
      }
    }
  }
  return best_tau;
}

std::vector<uint8_t> BudgetSolver::assign(double tau) const {
  std::vector<uint8_t> option(item_base_);
  for (size_t c = 0; c < time_.channels.size(); ++c) {
    const int64_t begin = step_begin_[c], end = step_begin_[c + 1];
    int64_t bytes = base_bytes_[c];
    for (int64_t s = begin; s < end; ++s) {
      const int64_t step_bytes = step_cum_bytes_[s] - (s > begin ? step_cum_bytes_[s - 1] : 0);
      const int32_t i = step_item_[s];
      const uint8_t pos = step_hull_pos_[s];
      if (option[i] != hull_[pos - 1]) continue;  // its previous step did not fit
      if (time_.channel_time(static_cast<int32_t>(c), bytes + step_bytes) > tau) continue;
      option[i] = hull_[pos];
      bytes += step_bytes;
    }
  }
  const Groups& groups = buffers_->groups;
  std::vector<uint8_t> bits(static_cast<size_t>(message_count_));
  for (size_t i = 0; i < groups.size(); ++i) {
    for (int32_t k = groups.offsets[i]; k < groups.offsets[i + 1]; ++k) {
      bits[groups.members[k]] = static_cast<uint8_t>(option_bits_[option[i]]);
    }
  }
  return bits;
}

}  // namespace adaqp::assign
