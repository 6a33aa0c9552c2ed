// The named choices of a job: configuration text to values, parsed once where the configuration
// is read (job_config.cpp); past that boundary the code sees only these enums.
#pragma once

#include <string>

namespace adaqp {

// communication.mode (design notes, section 7): Vanilla (full precision, no overlap), AdaQP-q
// (quantized), AdaQP-p (overlapped), AdaQP (both).
enum class CommMode { kVanilla, kQuant, kOverlap, kAdaqp };

// Training messages are quantized (AdaQP-q, AdaQP).
constexpr bool quantizes(CommMode m) {
  return m == CommMode::kQuant || m == CommMode::kAdaqp;
}
// Exchanges overlap the A_local work (AdaQP-p, AdaQP).
constexpr bool overlaps(CommMode m) {
  return m == CommMode::kOverlap || m == CommMode::kAdaqp;
}

// communication.scheme: how the quantized modes choose each message's bit-width: the solver
// (adaptive), or the ablations uniform (communication.bits) and random (uniform over the bit set).
enum class BitScheme { kAdaptive, kUniform, kRandom };

// training.recompute: what backward makes again instead of keeping from forward. aggregations: a
// layer that aggregates before its dense product keeps its input and the halo rows it received
// instead of A·h, and recomputes A·h in backward (no second exchange; docs/memory.md).
enum class Recompute { kNone, kAggregations };

// "vanilla", "quant", "overlap", "adaqp"; "adaptive", "uniform", "random"; "none", "aggregations".
const char* to_string(CommMode mode);
const char* to_string(BitScheme scheme);
const char* to_string(Recompute recompute);

// The value named by `text`; ConfigError "must be one of ..." otherwise (the caller names the key).
CommMode parse_comm_mode(const std::string& text);
BitScheme parse_bit_scheme(const std::string& text);
Recompute parse_recompute(const std::string& text);

}  // namespace adaqp
