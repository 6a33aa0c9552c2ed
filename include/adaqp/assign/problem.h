// The bit-width assignment problem of one layer and one direction (docs/design.md, section 6):
// choose b_j in the allowed bit set for every message j to minimise
//     lambda * (V - Vmin) / (Vmax - Vmin) + (1 - lambda) * (T - Tmin) / (Tmax - Tmin)
// with V = sum_j w_j / (2^b_j - 1)^2 and T the modelled exchange time (time_model.h) of
// bytes_j = quant::message_bytes(d, b_j), counted from `hidden_s` on: T = max(exchange time,
// hidden_s), where hidden_s is the work the receivers do while the exchange is in flight (the
// overlapped modes), so that precision which fits in that window costs no time. Vmax and Tmin are
// those of all messages at the smallest allowed codec width, Vmin and Tmax those at the largest; a
// term whose bounds coincide is 0. Full precision (quant::kFullPrecisionBits: 4 d bytes, no
// variance) may be allowed beside the codec widths: it does not move the bounds, so it is priced
// at the codec widths' rate of time against variance (the objective is linear beyond them); where
// the bounds of time coincide (the hidden window holds the largest codec width) there is no rate,
// and full precision is taken only where the exchange stays within Tmin.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "adaqp/assign/time_model.h"
#include "adaqp/quant/widths.h"

namespace adaqp::assign {

struct Message {
  int32_t sender = 0;
  int32_t receiver = 0;  // != sender
  double weight = 0;     // w_j >= 0 (variance_weight.h)
};

struct AssignProblem {
  int64_t row_width = 0;  // d: elements per row, >= 1
  // Allowed widths: at least one codec width, and full precision if wanted.
  std::vector<int> bits = quant::all_widths();
  TimeModel time;
  double hidden_s = 0;  // exchange time hidden behind local work (>= 0; 0: none is hidden)
  std::vector<Message> messages;
};

// The bytes of one row at b bits: quant::message_bytes (metadata and codes).
int64_t row_bytes(const AssignProblem& problem, int bits);

// Variance of one message per unit weight at b bits: 1 / (2^b - 1)^2; 0 at full precision.
double variance_factor(int bits);

// Throws ConfigError for a bad row width, meta size, bit set or time model (naming the field or
// channel and the value) and InvariantError for a message with a rank out of range, a self-message
// or a negative or non-finite weight (naming the message index).
void validate(const AssignProblem& problem);

// The narrowest and widest codec width in `bits` (0, 0 if none).
std::pair<int, int> codec_width_range(const std::vector<int>& bits);

struct ObjectiveBounds {
  double vmin = 0, vmax = 0;  // variance at all-largest and all-smallest bits
  double tmin = 0, tmax = 0;  // counted time (at least hidden_s) at all-smallest and all-largest
};

ObjectiveBounds objective_bounds(const AssignProblem& problem);

// Bounds of the union of two message sets that share no channel (e.g. the outgoing messages of
// two ranks under the per-link or per-sender model): variances add, times take the maximum.
ObjectiveBounds combine(const ObjectiveBounds& a, const ObjectiveBounds& b);

// The normalised objective of variance v and time t under `bounds`; lambda in [0, 1]. A time below
// bounds.tmin counts as tmin (hidden time is free). Inline: the fast solver evaluates it at every
// breakpoint.
inline double normalized_objective(const ObjectiveBounds& bounds, double lambda, double v,
                                   double t) {
  double objective = 0;
  // Written as constant scale * difference, so that a caller's loop computes the scales once.
  if (bounds.vmax > bounds.vmin) {
    objective += lambda / (bounds.vmax - bounds.vmin) * (v - bounds.vmin);
  }
  if (bounds.tmax > bounds.tmin && t > bounds.tmin) {
    objective += (1 - lambda) / (bounds.tmax - bounds.tmin) * (t - bounds.tmin);
  }
  return objective;
}

struct Evaluation {
  double variance = 0;
  double time = 0;
  double objective = 0;
};

// V, T and the objective of `bits` (one bit-width per message, in input order).
Evaluation evaluate(const AssignProblem& problem, const std::vector<uint8_t>& bits, double lambda);

}  // namespace adaqp::assign
