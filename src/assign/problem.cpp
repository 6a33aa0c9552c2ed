#include "adaqp/assign/problem.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/quant/widths.h"

namespace adaqp::assign {
namespace {

// Time of the exchange when every message is sent at `bits`; count = messages per channel.
double uniform_time(const AssignProblem& problem, const std::vector<int64_t>& count, int bits) {
  const int64_t rb = row_bytes(problem, bits);
  double t = 0;
  for (size_t c = 0; c < count.size(); ++c) {
    t = std::max(t, problem.time.channel_time(static_cast<int32_t>(c), count[c] * rb));
  }
  return t;
}

}  // namespace

int64_t row_bytes(const AssignProblem& problem, int bits) {
  return quant::message_bytes(problem.row_width, bits);
}

double variance_factor(int bits) {
  if (bits == quant::kFullPrecisionBits) return 0.0;
  const double levels = static_cast<double>((1 << bits) - 1);
  return 1.0 / (levels * levels);
}

void validate(const AssignProblem& problem) {
  if (problem.row_width < 1) {
    throw ConfigError("assign: row_width must be >= 1, got " + std::to_string(problem.row_width));
  }
  if (problem.bits.empty()) throw ConfigError("assign: bits: the allowed bit set is empty");
  for (size_t i = 0; i < problem.bits.size(); ++i) {
    const int b = problem.bits[i];
    if (!quant::valid_message_bits(b)) {
      throw ConfigError("assign: bits[" + std::to_string(i) + "] = " + std::to_string(b) +
                        " (allowed: " + quant::width_list() + ", and " +
                        std::to_string(quant::kFullPrecisionBits) + " for full precision)");
    }
    if (std::count(problem.bits.begin(), problem.bits.end(), b) > 1) {
      throw ConfigError("assign: bits: " + std::to_string(b) + " listed twice");
    }
  }
  if (std::none_of(problem.bits.begin(), problem.bits.end(), quant::valid_bits)) {
    throw ConfigError("assign: bits: no codec width (" + quant::width_list() + ")");
  }
  if (!std::isfinite(problem.hidden_s) || problem.hidden_s < 0) {
    throw ConfigError("assign: hidden_s must be finite and >= 0, got " +
                      std::to_string(problem.hidden_s));
  }
  const TimeModel& tm = problem.time;
  const size_t pairs = static_cast<size_t>(std::max(tm.world_size, 0)) * std::max(tm.world_size, 0);
  if (tm.world_size < 1 || tm.channel_of_pair.size() != pairs) {
    throw ConfigError("assign: time model: world size " + std::to_string(tm.world_size) + " with " +
                      std::to_string(tm.channel_of_pair.size()) + " pair entries");
  }
  for (size_t c = 0; c < tm.channels.size(); ++c) {
    const LinkCost& cost = tm.channels[c];
    if (!std::isfinite(cost.alpha) || cost.alpha < 0 || !std::isfinite(cost.beta) ||
        cost.beta <= 0) {
      throw ConfigError("assign: time model: channel " + std::to_string(c) + ": alpha " +
                        std::to_string(cost.alpha) + ", beta " + std::to_string(cost.beta) +
                        " (need alpha >= 0, beta > 0)");
    }
  }
  for (int s = 0; s < tm.world_size; ++s) {
    for (int r = 0; r < tm.world_size; ++r) {
      const int32_t c = tm.channel(s, r);
      const bool ok = s == r ? c == -1 : c >= 0 && static_cast<size_t>(c) < tm.channels.size();
      if (!ok) {
        throw ConfigError("assign: time model: pair " + std::to_string(s) + "->" +
                          std::to_string(r) + " maps to channel " + std::to_string(c));
      }
    }
  }
  ADAQP_CHECK(problem.messages.size() < static_cast<size_t>(INT32_MAX),
              std::to_string(problem.messages.size()) + " messages");
  for (size_t j = 0; j < problem.messages.size(); ++j) {
    const Message& m = problem.messages[j];
    const bool ranks_ok = m.sender >= 0 && m.sender < tm.world_size && m.receiver >= 0 &&
                          m.receiver < tm.world_size && m.sender != m.receiver;
    if (!ranks_ok || !std::isfinite(m.weight) || m.weight < 0) {
      throw InvariantError("assign: message " + std::to_string(j) + ": " +
                           std::to_string(m.sender) + "->" + std::to_string(m.receiver) +
                           ", weight " + std::to_string(m.weight) + " (world size " +
                           std::to_string(tm.world_size) + ")");
    }
  }
}

std::pair<int, int> codec_width_range(const std::vector<int>& bits) {
  int lo = 0, hi = 0;
  for (int b : bits) {
    if (!quant::valid_bits(b)) continue;
    lo = lo == 0 ? b : std::min(lo, b);
    hi = std::max(hi, b);
  }
  return {lo, hi};
}

ObjectiveBounds objective_bounds(const AssignProblem& problem) {
  const auto [lo, hi] = codec_width_range(problem.bits);
  std::vector<int64_t> count(problem.time.channels.size(), 0);
  double weight = 0;
  // Counted by runs of one link (messages usually come link by link), so that consecutive
  // messages do not wait on the same counter in memory.
  int32_t run_channel = -1;
  int64_t run = 0;
  for (const Message& m : problem.messages) {
    const int32_t c = problem.time.channel(m.sender, m.receiver);
    if (c != run_channel) {
      if (run_channel >= 0) count[run_channel] += run;
      run_channel = c;
      run = 0;
    }
    ++run;
    weight += m.weight;
  }
  if (run_channel >= 0) count[run_channel] += run;
  ObjectiveBounds b;
  b.vmax = weight * variance_factor(lo);
  b.vmin = weight * variance_factor(hi);
  b.tmin = std::max(uniform_time(problem, count, lo), problem.hidden_s);
  b.tmax = std::max(uniform_time(problem, count, hi), problem.hidden_s);
  return b;
}

ObjectiveBounds combine(const ObjectiveBounds& a, const ObjectiveBounds& b) {
  return {a.vmin + b.vmin, a.vmax + b.vmax, std::max(a.tmin, b.tmin), std::max(a.tmax, b.tmax)};
}

Evaluation evaluate(const AssignProblem& problem, const std::vector<uint8_t>& bits, double lambda) {
  ADAQP_CHECK_EQ(bits.size(), problem.messages.size(), "bit-widths, messages");
  // Per bit-width (index 0..32): its row bytes and variance factor, 0 where not allowed.
  std::array<int64_t, quant::kFullPrecisionBits + 1> row{};
  std::array<double, quant::kFullPrecisionBits + 1> factor{};
  for (int b : problem.bits) {
    row[b] = row_bytes(problem, b);
    factor[b] = variance_factor(b);
  }
  std::vector<int64_t> bytes(problem.time.channels.size(), 0);
  Evaluation e;
  for (size_t j = 0; j < bits.size(); ++j) {
    const Message& m = problem.messages[j];
    ADAQP_CHECK(bits[j] < row.size() && row[bits[j]] > 0,
                "message " + std::to_string(j) + " has bit-width " + std::to_string(bits[j]) +
                    " outside the allowed set");
    e.variance += m.weight * factor[bits[j]];
    bytes[problem.time.channel(m.sender, m.receiver)] += row[bits[j]];
  }
  for (size_t c = 0; c < bytes.size(); ++c) {
    e.time = std::max(e.time, problem.time.channel_time(static_cast<int32_t>(c), bytes[c]));
  }
  e.objective = normalized_objective(objective_bounds(problem), lambda, e.variance, e.time);
  return e;
}

}  // namespace adaqp::assign
