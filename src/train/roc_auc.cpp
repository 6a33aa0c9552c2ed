#include "adaqp/train/roc_auc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "adaqp/comm/all_to_all.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

constexpr int kRocAucTag = 32753;
constexpr int kHeader = 3;  // a sender's block starts with its split sizes

// How many of `num_tasks` tasks rank `rank` of `world` scores (t % world == rank).
int64_t tasks_of(int rank, int world, int64_t num_tasks) {
  return num_tasks > rank ? (num_tasks - rank + world - 1) / world : 0;
}

// Orders `pairs` by their scores (bits 1-32; ties in any order): a least-significant-digit radix
// sort of three 11-bit digits, 7-8x std::sort's speed at a task's 20k-90k pairs (measured).
void sort_by_score(std::vector<uint64_t>& pairs, std::vector<uint64_t>& scratch) {
  constexpr int kDigitBits = 11;
  constexpr uint64_t kDigits = uint64_t{1} << kDigitBits;
  scratch.resize(pairs.size());
  for (int shift = 1; shift < 33; shift += kDigitBits) {
    std::array<size_t, kDigits + 1> start{};
    for (const uint64_t x : pairs) ++start[((x >> shift) & (kDigits - 1)) + 1];
    // A digit all pairs share orders nothing.
    if (std::find(start.begin(), start.end(), pairs.size()) != start.end()) continue;
    for (size_t d = 1; d <= kDigits; ++d) start[d] += start[d - 1];
    for (const uint64_t x : pairs) scratch[start[(x >> shift) & (kDigits - 1)]++] = x;
    pairs.swap(scratch);
  }
}

}  // namespace

uint64_t scored_label(float score, bool positive) {
  // Every NaN (a diverged model's, of either sign) one score below every number: key 0, which no
  // number's key reaches (-inf's is 0x007fffff).
  if (std::isnan(score)) return positive ? 1u : 0u;
  if (score == 0.0f) score = 0.0f;  // -0 ties with +0
  uint32_t bits = 0;
  std::memcpy(&bits, &score, sizeof(bits));
  // Negative floats order backwards by their bits: flip them all; positive ones go above them.
  const uint32_t key = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  return (static_cast<uint64_t>(key) << 1) | (positive ? 1u : 0u);
}

std::optional<double> roc_auc(std::vector<uint64_t>& pairs, std::vector<uint64_t>& scratch) {
  sort_by_score(pairs, scratch);
  const auto n = static_cast<int64_t>(pairs.size());
  int64_t positives = 0;
  double positive_ranks = 0;  // the positives' 1-based ranks, a tie's rank its group's mean
  for (int64_t i = 0; i < n;) {
    int64_t j = i, group_positives = 0;
    while (j < n && (pairs[j] >> 1) == (pairs[i] >> 1)) group_positives += pairs[j++] & 1;
    positives += group_positives;
    positive_ranks += static_cast<double>(group_positives) * static_cast<double>(i + 1 + j) / 2;
    i = j;
  }
  const int64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return std::nullopt;
  // Mann-Whitney: the positives' rank sum less its least value counts the (positive, negative)
  // pairs ordered right, ties as half.
  const double p = static_cast<double>(positives);
  return (positive_ranks - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

double RocAucSums::mean(int split) const {
  return tasks[split] > 0 ? sum[split] / static_cast<double>(tasks[split]) : 0.0;
}

RocAucSums distributed_roc_auc(Communicator& comm, const float* scores, const uint8_t* labels,
                               int64_t num_rows, int64_t num_tasks,
                               const std::array<const std::vector<int64_t>*, 3>& split_rows) {
  const int world = comm.size(), me = comm.rank();
  for (const auto* split : split_rows) {
    for (const int64_t row : *split)
      ADAQP_CHECK(row >= 0 && row < num_rows,
                  fmt::format("ROC-AUC: split row {} outside [0, {})", row, num_rows));
  }
  // Rank r's block: the split sizes, then per split k and task j of r's, the split's pairs.
  std::vector<std::vector<uint64_t>> send(world);
  std::vector<std::array<size_t, 3>> send_start(world);
  for (int r = 0; r < world; ++r) {
    size_t at = kHeader;
    for (int k = 0; k < 3; ++k) {
      send_start[r][k] = at;
      at += split_rows[k]->size() * tasks_of(r, world, num_tasks);
    }
    send[r].resize(at);
    for (int k = 0; k < 3; ++k) send[r][k] = split_rows[k]->size();
  }
  // Row by row (each row's scores read once, in order), each value to its task's place.
  for (int k = 0; k < 3; ++k) {
    const std::vector<int64_t>& rows = *split_rows[k];
    const auto n = static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t first = rows[i] * num_tasks;
      for (int64_t t = 0; t < num_tasks; ++t) {
        const int r = static_cast<int>(t % world);
        send[r][send_start[r][k] + (t / world) * n + i] =
            scored_label(scores[first + t], labels[first + t] != 0);
      }
    }
  }
  const Received<uint64_t> in = all_to_all(comm, send, kRocAucTag);
  send.clear();
  const int64_t mine = tasks_of(me, world, num_tasks);
  // Where each sender's pairs of split k, task j (the j-th this rank scores) begin.
  std::vector<std::array<size_t, 3>> split_start(world);
  std::vector<std::array<size_t, 3>> split_size(world);
  for (int r = 0; r < world; ++r) {
    const size_t begin = in.offsets[r], end = in.offsets[r + 1];
    ADAQP_CHECK(
        end - begin >= kHeader,
        fmt::format("ROC-AUC: rank {} sent {} words, fewer than its header", r, end - begin));
    size_t at = begin + kHeader;
    for (int k = 0; k < 3; ++k) {
      split_size[r][k] = in.data[begin + k];
      split_start[r][k] = at;
      at += split_size[r][k] * mine;
    }
    ADAQP_CHECK(at == end, fmt::format("ROC-AUC: rank {} sent {} words, its header says {}", r,
                                       end - begin, at - begin));
  }
  // Each (split, task) sorted on its own: the rank's threads share them.
  const int64_t jobs = 3 * mine;
  std::vector<double> auc(static_cast<size_t>(jobs), -1.0);  // -1: undefined
#pragma omp parallel if (jobs > 1)
  {
    std::vector<uint64_t> pairs, scratch;
#pragma omp for schedule(dynamic, 1)
    for (int64_t job = 0; job < jobs; ++job) {
      const int64_t k = job / mine, j = job % mine;
      pairs.clear();
      for (int r = 0; r < world; ++r) {
        const auto first = in.data.begin() + split_start[r][k] + j * split_size[r][k];
        pairs.insert(pairs.end(), first, first + split_size[r][k]);
      }
      auc[job] = roc_auc(pairs, scratch).value_or(-1.0);
    }
  }
  RocAucSums sums;
  for (int64_t job = 0; job < jobs; ++job) {
    if (auc[job] < 0) continue;
    sums.sum[job / mine] += auc[job];
    ++sums.tasks[job / mine];
  }
  comm.allreduce_sum(sums.sum.data(), 3);
  comm.allreduce_sum(sums.tasks.data(), 3);
  return sums;
}

std::array<int64_t, 3> defined_tasks(Communicator& comm, const uint8_t* labels, int64_t num_tasks,
                                     const std::array<const std::vector<int64_t>*, 3>& split_rows) {
  // Per split: its rows, then each task's rows with the label 1.
  const int64_t stride = num_tasks + 1;
  std::vector<int64_t> counts(static_cast<size_t>(3 * stride), 0);
  for (int k = 0; k < 3; ++k) {
    int64_t* split = counts.data() + k * stride;
    split[0] = static_cast<int64_t>(split_rows[k]->size());
    for (const int64_t row : *split_rows[k])
      for (int64_t t = 0; t < num_tasks; ++t) split[1 + t] += labels[row * num_tasks + t] != 0;
  }
  comm.allreduce_sum(counts.data(), counts.size());
  std::array<int64_t, 3> defined{};
  for (int k = 0; k < 3; ++k) {
    const int64_t* split = counts.data() + k * stride;
    for (int64_t t = 0; t < num_tasks; ++t)
      defined[k] += split[1 + t] > 0 && split[1 + t] < split[0];
  }
  return defined;
}

}  // namespace adaqp
