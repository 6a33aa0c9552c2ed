// Internal to the solvers: messages grouped into items that share one bit-width, and the option
// table of the allowed bit-widths.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/assign/problem.h"

namespace adaqp::assign {

// Group i holds messages members[offsets[i] .. offsets[i + 1]) (ascending), all of one link.
// Groups are numbered in the order of their first message.
struct Groups {
  std::vector<int32_t> offsets;
  std::vector<int32_t> members;
  std::vector<int32_t> channel;
  std::vector<double> weight;  // sum of the members' weights

  size_t size() const { return channel.size(); }
  int64_t count(size_t i) const { return offsets[i + 1] - offsets[i]; }
};

// Consecutive messages of each link, in input order, in groups of group_size (the last group of a
// link may be smaller), written over `out` (whose memory is reused).
void group_messages(const AssignProblem& problem, int group_size, Groups& out);

// The allowed bit-widths by ascending row bytes (ties: descending variance factor), with their row
// bytes and variance factors.
struct BitOptions {
  std::vector<int> bits;
  std::vector<int64_t> bytes;
  std::vector<double> factor;

  size_t size() const { return bits.size(); }
};

BitOptions bit_options(const AssignProblem& problem);

}  // namespace adaqp::assign
