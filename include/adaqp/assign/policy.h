// The bit-width policy of a training run (docs/design.md, sections 6 and 7): the width of every
// message of an epoch's quantized exchanges. One interface for the three schemes, which the
// trainer calls around every training epoch: uniform and random (scheme_plan: computed by every
// rank alike, no communication; the uniform plan is built once), and adaptive (adaptive_policy.h:
// a solver over the last epoch's traced messages and the link model).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/exchange_stats.h"
#include "adaqp/quant/widths.h"

namespace adaqp {

// What the plan of one epoch cost and predicts (this rank's view).
struct AssignStats {
  bool solved = false;  // widths were (re)computed for this epoch
  // The measured check of full precision (adaptive_policy.h) found it slower than quantizing: no
  // exchange goes to full precision for the rest of the run (identical on every rank).
  bool full_precision_given_up = false;
  // The epoch ran Vanilla's schedule (QuantPlan::overlap false): a trial epoch of the adaptive
  // scheme, or every epoch after the trial found it faster (adaptive_policy.h).
  bool vanilla_schedule = false;
  // The policy's time on the epoch's thread, this epoch: solving and distributing the widths (with
  // a background solve: copying the problems' inputs, waiting for the solve, adopting its
  // widths), and the statistics after the epoch (finish_epoch, which gathers them from every rank).
  double assign_time_s = 0;
  // A background solve adopted this epoch: how long it ran beside the previous epoch (0 if none).
  double background_solve_s = 0;
  // Modelled time of each layer's exchange under the current widths (identical on every rank;
  // 0 where no exchange was traced).
  std::vector<double> predicted_forward_s, predicted_backward_s;
  // Measured time of each layer's exchange on this rank, from the moment the LAST rank started it
  // (start_* entered; steady clocks aligned to rank 0's, clock_offset.h) until this rank's
  // transfers had completed and were unpacked (0 if that came first); 0 where not exchanged. The
  // largest over the ranks is the exchange's duration once every sender has begun, which is what
  // the model predicts. (A rank's own wall time from its own start, which also holds its wait for
  // late peers, stays in EpochStats::comm_forward_s / comm_backward_s.)
  std::vector<double> measured_forward_s, measured_backward_s;
  // This rank's sent messages per layer at 2, 4 and 8 bits and at full precision
  // (quant::message_width).
  std::vector<std::array<int64_t, quant::kNumMessageWidths>> hist_forward, hist_backward;
  // Links of two classes (assign/time_model.h): the bytes this rank sent to ranks of its own host,
  // and how many of them at full precision (0 where the link model has no classes).
  int64_t same_host_bytes = 0, same_host_full_precision_bytes = 0;
};

class BitPolicy {
 public:
  virtual ~BitPolicy() = default;
  // The plan of training epoch `epoch`, valid until the next call (collective for a policy that
  // communicates). `traces`: the value ranges of the messages traced so far (the last epoch's).
  virtual const QuantPlan& plan(int epoch, const MessageTraces& traces) = 0;
  // After the epoch's exchanges (collective for a policy that communicates): what the plan cost
  // and predicts, or null for a policy without such statistics. `comm`: the epoch's exchanges.
  virtual const AssignStats* finish_epoch(const CommStats& comm, const MessageTraces& traces) = 0;
};

// The uniform or random scheme (opt.scheme) for a model of `layers` layers; ConfigError for a
// uniform width outside {2, 4, 8}.
std::unique_ptr<BitPolicy> make_scheme_policy(const Boundary& boundary, int layers,
                                              const SchemeOptions& opt);

}  // namespace adaqp
