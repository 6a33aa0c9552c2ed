// The adaptive bit-width scheme (docs/design.md, sections 6 and 7), a BitPolicy (policy.h): one
// bit-width per message, per layer and direction, chosen by the solver (budget_solver.h, or the
// exact MILP of solve.h) from the previous epoch's traced messages and the link cost model
// (train/link_probe.h measures it).
//
// Distribution: every rank solves for its OWN outgoing messages only. Under the per-sender time
// model the ranks' channels are disjoint, so they need to agree on the time budget alone. Every
// rank knows every sender's message count (gathered at construction) and the whole time model
// (with every rank's codec time, gathered with each epoch's statistics), so all compute the same
// time bounds [tmin, tmax] without communicating. One collective per solve then gathers each
// rank's variance bounds and its prefix variances (BudgetSolver::prefix_variance) at 257 budgets
// evenly over [tmin, tmax], every layer and direction together; every rank sums them in rank
// order and takes the same, first best budget (resolution (tmax - tmin) / 256: a larger budget
// never raises a greedy prefix's variance, so the objective is at most (1 - lambda) / 256 above the
// exact sweep's, BudgetSolver::best_budget; on the test graphs 0-6% of the objective, the MILP's
// optimum being the sweep's). The objective at a budget counts the budget itself as the exchange
// time. Each sender then fills the budget greedily (BudgetSolver::assign) and sends every receiver
// the widths of its messages, 2 bits per message, in one small exchange: two synchronisations per
// solve. With solver exact, rank 0 gathers all messages, solves the MILP and broadcasts the widths.
// Deterministic without the measured times (constructor): the same traces, model and options give
// the same widths on every run.
//
// Exposed time: in the overlapped modes the receivers work while an exchange is in flight, and the
// epoch waits only for what is left. Each exchange's hidden time (AssignProblem::hidden_s) is, in
// the last epoch, the time from the moment the last rank started it (from where the model times
// it) until the first rank needed its data (start plus ExchangeTrace::hidden_s, gathered with the
// statistics), so the objective counts max(exchange time, hidden time): widths that fit in the
// window cost nothing, and the budget search starts there.
//
// Time model of one exchange: the per-sender link model (link_probe.h), whose channel s is busy
// alpha_s + beta_s * bytes_s (with links of two speeds, two channels per sender: to the ranks of
// its host and to other hosts, time_model.h), plus (measured_times, constructor) on every channel
// of a sender the time that sender spent quantizing and dequantizing the same exchange in the last
// epoch (ExchangeTrace::quant_s; about independent of the widths: every element is read and
// rounded). The runtime packs each peer's block before sending it and unpacks each arrival, on the
// same thread, so that work is part of the exchange; on a fast link it is most of it. It is counted
// in full, on top of the transfer: where the cores are shared (the virtual cluster), the codec and
// the network stack hardly overlap; where they do, this over-predicts by up to the codec time. The
// solver plans with this model and the epoch's prediction is the largest over the senders
// (AssignStats::predicted_*).
//
// Objective (AdaptiveOptions::objective, docs/design.md section 6): seconds (the default) also
// weighs full precision for a whole exchange (no codec, no trace: the overlap mode's path), with
// its own modelled time (4 d bytes a message, no codec time), first without a solve (it wins if it
// is no slower than every message at the narrowest width), then against the solution (it wins if
// its time is at most the solution's time plus its variance priced at the normalised objective's
// rate). Every input of both tests is common to all ranks, so they all take the same decision;
// the codec time of an exchange now at full precision is the one measured when it was last
// quantized. With links of two speeds, seconds also lets each message travel at full precision
// inside a quantized exchange (quant::kFullPrecisionBits, one more option of the solver, priced at
// the codec widths' rate, unless the measured check gave full precision up): where its channel
// fits it in the budget the slowest channel sets, it goes there (every message within a host; a
// network channel with time to spare may take some too). Each rank between hosts plans with its
// host's slope times the host's ranks that send there (link_probe.h): for ranks of unequal loads
// the heavier one is modelled slower than it is. normalized: the paper's objective over the codec
// widths alone.
//
// Weights (assign/variance_weight.h): forward message j (row v to peer q) has
// w_j = (sum over q's rows i of a_iv^2) * d * range_j^2 / 6; q knows a_iv for its halo column v
// (1 for a partial sum, whose coefficients the sender applied: its weight is its own range's)
// and sends the column sums to the owner once, at construction. Backward: w_j = d * range_j^2 / 6
// for a gradient added into one row; through a send matrix S (the cover layout: a partial sum's
// gradient reaches each of its sources j with coefficient a_ij) w_j = (sum_j a_ij^2) * d *
// range_j^2 / 6, the row sums of S's squares, which the sender sends the receiver at construction.
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/assign/budget_solver.h"
#include "adaqp/assign/measured_schedule.h"
#include "adaqp/assign/policy.h"
#include "adaqp/assign/problem.h"
#include "adaqp/assign/solve.h"
#include "adaqp/assign/time_model.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/partition/boundary.h"

namespace adaqp {

struct AdaptiveOptions {
  std::vector<int> bit_set = quant::all_widths();  // communication.bit_set: allowed widths
  double lambda = 0.5;  // communication.lambda: weight of the variance term
  int group_size = 1;   // communication.group_size: messages sharing one width
  int period = 1;       // communication.assign_period: epochs between solves
  assign::Solver solver = assign::Solver::kFast;              // communication.solver
  assign::Objective objective = assign::Objective::kSeconds;  // communication.objective
  double resolve_drift = 0.5;  // communication.resolve_drift: see AdaptivePolicy::plan
  // communication.solve_schedule, resolved: solve beside the epoch (AdaptivePolicy::plan).
  bool background_solve = false;
};

// ConfigError naming the communication.* key and its value.
void validate(const AdaptiveOptions& opt);

class AdaptivePolicy : public BitPolicy {
 public:
  // Epochs an exchange stays at full precision before one epoch at the largest width re-measures
  // it (plan()).
  static constexpr int kRefreshEpochs = 50;

  // Collective (one exchange of the forward coefficient sums, one of the backward ones with a send
  // matrix; the clock offset to rank 0, clock_offset.h). `boundary`, `a_halo` (the normalised
  // adjacency's halo block over the boundary's received rows, host memory) and `comm` must outlive
  // the policy; `time` is the link model the solver plans with (per sender, world = comm.size()),
  // plus, if `measured_times`, the measured quantization time and hidden time of each exchange
  // (without them, the same traces give the same widths on every run). `send_matrix` (host memory,
  // used at construction only): the matrix S whose product with H makes the sent rows (the cover
  // layout), or null (each sent row is a row of H).
  AdaptivePolicy(const Boundary& boundary, const kernels::CsrView& a_halo, Communicator& comm,
                 assign::TimeModel time, int layers, const AdaptiveOptions& opt, uint64_t seed,
                 bool measured_times, const kernels::CsrView* send_matrix = nullptr);
  // Waits for a background solve still running (its collectives are bounded by the timeout).
  ~AdaptivePolicy() override;
  AdaptivePolicy(const AdaptivePolicy&) = delete;
  AdaptivePolicy& operator=(const AdaptivePolicy&) = delete;

  // Every message at the largest allowed width until an epoch has been traced (two with measured
  // times: the first epoch's codec time is a cold start's). Then, every `period` epochs, each
  // exchange is planned again from the last traced epoch:
  // - objective seconds: at full precision where that takes no longer than the narrowest width
  //   (codec included; no solve, no trace); lambda = 1 puts every exchange there;
  // - otherwise the solver's widths (objective seconds: or full precision, where the solution's
  //   objective in seconds is no better), re-solved only if some rank's sum of squared ranges
  //   of its traced messages changed by at least resolve_drift (relative) since the last solve,
  //   or full precision was given up since a solve that let single messages take it.
  //   The measured times (codec, hidden) jitter by tens of percent from epoch to epoch: they enter
  //   every solve and the full-precision test, but trigger no solve.
  // An exchange at full precision for kRefreshEpochs epochs travels one epoch at the largest width
  // again (traced), so that its codec time and ranges are measured afresh before it is decided
  // again. Objective seconds with measured times (more than one rank): the check of full precision
  // and the trials of Vanilla's schedule of measured_schedule.h time every epoch on the slowest
  // rank without plan() (a solve, one-off or settling with the drift, is not the schedule's cost);
  // full precision given up there is never chosen again, and a trial's epochs (and, where it won,
  // every later one until a trial of the scheme wins back) run Vanilla's schedule
  // (QuantPlan::overlap false, every exchange at full precision, nothing to solve); after a lost
  // trial, and for a trial of the scheme, the scheme's plans as its last epoch left them come
  // back. Every plan traces its quantized exchanges.
  // Background solve (AdaptiveOptions::background_solve, where comm.host_duplicate() gives a
  // communicator for a second thread): after the first solve (inline: until it every message
  // travels at the largest width), the exchanges due are decided here, as above, and their inputs
  // copied, but their problems are built and solved (and the widths sent to the receivers) on a
  // thread of the policy's own, over that communicator, while the epoch runs; the next plan()
  // waits for it (the wait is the only part of the solve left in assign_time_s) and adopts the
  // widths, one epoch later than an inline solve would. Every rank launches and adopts the same
  // solves at the same epochs. On a GPU the host is otherwise idle during the epoch; on the CPU the
  // solve shares the cores. Collective; every rank takes the same decisions.
  const QuantPlan& plan(int epoch, const MessageTraces& traces) override;
  // The statistics of the plan the epoch used (collective); `comm` holds the epoch's exchanges
  // (DistGraph::comm_stats). The histogram, prediction and measurement cover the exchanges that
  // happened (were traced). Never null.
  const AssignStats* finish_epoch(const CommStats& comm, const MessageTraces& traces) override;

 private:
  // What one due exchange's problem is built from, copied by plan(): a solve beside the epoch
  // builds its problems while the epoch traces anew and finish_epoch measures anew.
  struct ProblemInputs {
    int layer = 0;
    Direction dir = Direction::kForward;
    int64_t width = 0;          // values per message
    std::vector<float> ranges;  // the last trace's, in send order
  };
  // The measured times every problem of one solve prices its transfers with (plan()'s copies of
  // codec_s_ and hidden_s_), and whether a message may travel at full precision on its own.
  struct SolveTimes {
    std::vector<double> codec_s, hidden_s;
    bool per_link_full = false;
  };
  // The problem of this rank's messages of one exchange, written over `problem` (reusing its
  // memory).
  void fill_problem(const ProblemInputs& in, const SolveTimes& times,
                    assign::AssignProblem& problem) const;
  // Messages this rank sends each peer at each message width (quant::message_width_index), for
  // the send widths `send` of one exchange in direction dir (layer: for the error naming a value
  // that is not a width).
  using WidthCounts = std::array<int64_t, quant::kNumMessageWidths>;
  std::vector<WidthCounts> count_widths(const std::vector<uint8_t>& send, Direction dir,
                                        int layer) const;
  // One problem's outcome: this rank's widths (its own outgoing messages), or full precision for
  // the whole exchange (objective seconds: identical on every rank).
  struct Solution {
    std::vector<uint8_t> widths;
    bool full_precision = false;
  };
  // `dirs`: the direction of each problem; `full_s`: its modelled time at full precision.
  std::vector<Solution> solve(const std::vector<assign::AssignProblem>& problems,
                              const std::vector<Direction>& dirs,
                              const std::vector<double>& full_s);
  std::vector<Solution> solve_fast(const std::vector<assign::AssignProblem>& problems,
                                   const std::vector<Direction>& dirs,
                                   const std::vector<double>& full_s);
  Solution solve_exact(const assign::AssignProblem& problem, double full_s);
  // Objective seconds: whether full precision (time full_s, no variance) beats a solution of
  // exchange time tau and variance v under `bounds` (the codec widths' bounds over all ranks).
  bool full_precision_wins(const assign::ObjectiveBounds& bounds, double tau, double v,
                           double full_s) const;
  // The model's time for every traced exchange (of `traces`, by direction, then layer) at full
  // precision, nothing hidden: Vanilla's exchanges (MeasuredSchedule::trial_due).
  double vanilla_comm_time(const std::vector<const MessageTrace*>& traces) const;
  // Modelled time of exchange `at` (direction dir, rows of d values, every rank's messages) with
  // every message at `bits` (each sender's codec time included, except at full precision); at
  // least the exchange's hidden time.
  double uniform_time(size_t at, Direction dir, int64_t d, int bits) const;
  // The largest relative change, over the ranks, of exchange `at`'s sum of squared ranges since
  // its last solve (infinite if it was never solved).
  double drift(size_t at) const;
  // Fills the recv widths of every solved exchange (of direction dirs[i]) from the peers' send
  // widths; exchanges not solved keep the largest width at both ends (every rank traces the same
  // exchanges, so the peers agree on what is sent).
  void distribute(const std::vector<MessageBits*>& solved, const std::vector<Direction>& dirs);
  // The communicator of the solve's collectives: the background solve's own, else comm_.
  Communicator& solve_comm() { return solve_comm_ != nullptr ? *solve_comm_ : comm_; }
  // Builds problems_ from inputs_ (one per exchange of pending_) and solves them into pending_ (its
  // exceptions kept there), on whichever thread calls it.
  void run_pending();
  // Waits for the solve in flight, if any, and puts its widths into the plan of `epoch` (rethrows
  // what the solve threw).
  void adopt_pending(int epoch);
  // Puts saved_full_ back into the plan's exchanges.
  void restore_saved_full();

  const Boundary& boundary_;
  Communicator& comm_;
  assign::TimeModel time_;
  int layers_;
  AdaptiveOptions opt_;
  uint64_t seed_;
  std::vector<double> coeff_sq_;  // forward: sum of squared coefficients per boundary message
  // Backward with a send matrix: the squared coefficients through which each sent gradient reaches
  // the sender's rows (empty: 1 each).
  std::vector<double> backward_coeff_sq_;
  bool measured_times_;
  double clock_offset_s_ = 0;  // add to this rank's steady clock to read rank 0's
  // codec_s_[r * 2 * layers + exchange] (exchange: direction, then layer): rank r's quantization
  // and dequantization time of that exchange in the last epoch it took part in; 0 before the
  // first, and always without measured_times. Gathered with every epoch's statistics.
  std::vector<double> codec_s_;
  // hidden_s_[exchange]: its hidden time in the last epoch that had it (from the last rank's start
  // until the first rank needed the data, at least 0); 0 before the first, and always without
  // measured_times.
  std::vector<double> hidden_s_;
  // By direction: pair_messages_[d][s * world + r], the messages rank s sends rank r.
  std::vector<int64_t> pair_messages_[2];
  // Objective seconds with links of two classes (a sender's channels differ): each message may
  // travel at full precision inside a quantized exchange.
  bool per_link_full_ = false;
  // range_sq_[r * 2 * layers + exchange]: rank r's sum of squared ranges over the messages of its
  // last trace of that exchange, gathered with every epoch's statistics.
  std::vector<double> range_sq_;
  // Per exchange, the inputs of its last solve (drift()): range_sq_ of every rank, and whether
  // single messages could take full precision (SolveTimes::per_link_full): once the measured check
  // gives full precision up, a solve that allowed it is out of date, whatever the drift.
  struct SolvedInputs {
    bool valid = false;
    std::vector<double> range_sq;
    bool per_link_full = false;
  };
  std::vector<SolvedInputs> solved_inputs_;
  // Per exchange: the epoch it went to full precision, -1 while quantized.
  std::vector<int> full_since_;
  int traced_epochs_ = 0;  // epochs finished with at least one traced exchange
  // When the epoch's plan() began: epochs are timed from there, without plan() itself.
  double plan_start_s_ = -1;
  assign::MeasuredSchedule schedule_;
  // The full-precision choices of the scheme's plans when Vanilla's schedule last took over from
  // it (a trial of Vanilla's, or a lost trial of the scheme), which a lost trial of Vanilla's, or
  // a trial of the scheme, puts back (restore_saved_full). Taken anew at each hand-over: the
  // plans' widths, full_since_ and solved_inputs_ are the latest, and a choice older than them
  // would put an exchange at full precision that no refresh or solve ever takes up again.
  std::vector<bool> saved_full_;
  // send_counts_[exchange][peer]: count_widths of the plan's send widths, kept beside them so
  // that finish_epoch's statistics do not walk every message.
  std::vector<std::vector<WidthCounts>> send_counts_;
  // The last solve's inputs (the first pending_.dirs.size() entries), problems and solvers, kept
  // so that the next one reuses their memory.
  std::vector<ProblemInputs> inputs_;
  std::vector<assign::AssignProblem> problems_;
  std::vector<assign::BudgetSolver> solvers_;
  // The solve launched by plan() and not yet adopted: its exchanges (direction, then layer), their
  // directions and times at full precision, the measured times its problems are built with, and
  // the outcome: per exchange the widths both ways (and the send widths' count_widths), or full
  // precision; how long it took; what it threw.
  struct PendingSolve {
    std::vector<size_t> at;
    std::vector<Direction> dirs;
    std::vector<double> full_s;
    SolveTimes times;
    std::vector<MessageBits> bits;
    std::vector<std::vector<WidthCounts>> counts;
    double seconds = 0;
    std::exception_ptr error;
  };
  PendingSolve pending_;
  std::unique_ptr<Communicator> solve_comm_;  // background solve; null: inline
  std::thread solver_thread_;
  bool solver_launched_ = false;  // pending_ is being solved on solver_thread_
  bool widths_solved_ = false;    // a solve has been adopted (later ones may run beside the epoch)
  QuantPlan current_;
  bool solved_once_ = false;
  int last_solve_ = 0;
  AssignStats stats_;
};

}  // namespace adaqp
