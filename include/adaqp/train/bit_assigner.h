// The adaptive bit-width scheme (design notes, sections 6 and 7): one bit-width per message, per
// layer and direction, chosen by the solver (adaqp/assign) from the previous epoch's traced
// messages and the link cost model (link_probe.h).
//
// Distribution: every rank solves for its OWN outgoing messages only. Under the per-sender time
// model the ranks' channels are disjoint, so they need to agree on the time budget alone: they
// exchange scalars (the objective bounds, then the prefix variances at a grid of candidate budgets,
// refined three times around the best; every layer and direction in the same collectives), summing
// the gathered values in rank order so that every rank takes the same budget. The objective at a
// budget counts the budget itself as the exchange time. Each sender then fills the budget greedily
// (BudgetSolver::assign) and sends every receiver the widths of its messages, 2 bits per message,
// in one small exchange. With solver exact, rank 0 gathers all messages, solves the MILP and
// broadcasts the widths. Deterministic: the same traces, model and options give the same widths on
// every run.
//
// Weights (assign/variance_weight.h): forward message j (boundary node v to peer q) has
// w_j = (sum over q's rows i of a_iv^2) * d * range_j^2 / 6; q knows a_iv for its halo column v
// and sends the column sums to the owner once, at construction. Backward: w_j = d * range_j^2 / 6.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "adaqp/assign/problem.h"
#include "adaqp/assign/solve.h"
#include "adaqp/assign/time_model.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/model/bit_assignment.h"
#include "adaqp/model/dist_graph.h"

namespace adaqp {

struct AdaptiveOptions {
  std::vector<int> bit_set = {2, 4, 8};  // communication.bit_set: allowed widths
  double lambda = 0.5;                   // communication.lambda: weight of the variance term
  int group_size = 1;                    // communication.group_size: messages sharing one width
  int period = 1;                        // communication.assign_period: epochs between solves
  assign::Solver solver = assign::Solver::kFast;  // communication.solver
};

// ConfigError naming the communication.* key and its value.
void validate(const AdaptiveOptions& opt);

// What the plan of one epoch cost and predicts (this rank's view).
struct AssignStats {
  bool solved = false;       // widths were (re)computed for this epoch
  double assign_time_s = 0;  // solving and distributing the widths, this epoch
  // Modelled time of each layer's exchange under the current widths (identical on every rank;
  // 0 where no exchange was traced).
  std::vector<double> predicted_forward_s, predicted_backward_s;
  // This rank's sent messages per layer at 2, 4 and 8 bits.
  std::vector<std::array<int64_t, 3>> hist_forward, hist_backward;
};

class BitAssigner {
 public:
  // Collective (one exchange of the forward coefficient sums). `graph` and `comm` must outlive
  // the assigner; `time` is the model the solver plans with (per sender, world = comm.size()).
  BitAssigner(const DistGraph& graph, Communicator& comm, assign::TimeModel time, int layers,
              const AdaptiveOptions& opt, uint64_t seed);

  // The plan of `epoch` (collective): every message at the largest allowed width until an epoch
  // has been traced; then the solver's widths, re-solved from the last traced epoch every `period`
  // epochs. Every plan traces its exchanges.
  QuantPlan plan(int epoch);
  // After the epoch's exchanges (collective): the statistics of the plan it used. The histogram
  // and prediction cover the exchanges that happened (were traced).
  const AssignStats& finish_epoch();

 private:
  assign::AssignProblem problem(int layer, Direction dir, const MessageTrace& trace) const;
  // This rank's widths for each problem (its own outgoing messages).
  std::vector<std::vector<uint8_t>> solve(const std::vector<assign::AssignProblem>& problems);
  std::vector<std::vector<uint8_t>> solve_fast(const std::vector<assign::AssignProblem>& problems);
  std::vector<uint8_t> solve_exact(const assign::AssignProblem& problem);
  void distribute(QuantPlan& plan);  // fills every recv from the peers' send widths

  const DistGraph& graph_;
  Communicator& comm_;
  assign::TimeModel time_;
  int layers_;
  AdaptiveOptions opt_;
  uint64_t seed_;
  std::vector<double> coeff_sq_;  // forward: sum of squared coefficients per boundary message
  QuantPlan current_;
  bool solved_once_ = false;
  int last_solve_ = 0;
  AssignStats stats_;
};

}  // namespace adaqp
