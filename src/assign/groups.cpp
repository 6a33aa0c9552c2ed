#include "groups.h"

#include <algorithm>

namespace adaqp::assign {

void group_messages(const AssignProblem& problem, int group_size, Groups& g) {
  const size_t n = problem.messages.size();
  if (group_size == 1) {  // one group per message, in input order
    g.offsets.resize(n + 1);
    g.members.resize(n);
    g.channel.resize(n);
    g.weight.resize(n);
    g.offsets[0] = 0;
    for (size_t j = 0; j < n; ++j) {
      const Message& m = problem.messages[j];
      g.offsets[j + 1] = static_cast<int32_t>(j + 1);
      g.members[j] = static_cast<int32_t>(j);
      g.channel[j] = problem.time.channel(m.sender, m.receiver);
      g.weight[j] = m.weight;
    }
    return;
  }
  const int world = problem.time.world_size;
  std::vector<int32_t> open(static_cast<size_t>(world) * world, -1);  // per link: current group
  std::vector<int32_t> group_of(n);
  std::vector<int32_t> count;
  const size_t most = n / static_cast<size_t>(group_size) + open.size();
  g.channel.clear();
  g.weight.clear();
  g.channel.reserve(most);
  g.weight.reserve(most);
  count.reserve(most);
  for (size_t j = 0; j < n; ++j) {
    const Message& m = problem.messages[j];
    int32_t& current = open[static_cast<size_t>(m.sender) * world + m.receiver];
    if (current < 0 || count[current] == group_size) {
      current = static_cast<int32_t>(g.channel.size());
      g.channel.push_back(problem.time.channel(m.sender, m.receiver));
      g.weight.push_back(0);
      count.push_back(0);
    }
    group_of[j] = current;
    g.weight[current] += m.weight;
    ++count[current];
  }
  g.offsets.assign(g.channel.size() + 1, 0);
  for (size_t i = 0; i < count.size(); ++i) g.offsets[i + 1] = g.offsets[i] + count[i];
  g.members.resize(n);
  std::vector<int32_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (size_t j = 0; j < n; ++j) g.members[fill[group_of[j]]++] = static_cast<int32_t>(j);
}

BitOptions bit_options(const AssignProblem& problem) {
  // By ascending bytes, then descending variance (full precision's bytes need not exceed 8 bits'
  // for a tiny row width).
  std::vector<int> bits = problem.bits;
  std::sort(bits.begin(), bits.end(), [&](int a, int b) {
    const int64_t ba = row_bytes(problem, a), bb = row_bytes(problem, b);
    return ba != bb ? ba < bb : variance_factor(a) > variance_factor(b);
  });
  BitOptions o;
  for (int b : bits) {
    o.bits.push_back(b);
    o.bytes.push_back(row_bytes(problem, b));
    o.factor.push_back(variance_factor(b));
  }
  return o;
}

}  // namespace adaqp::assign
