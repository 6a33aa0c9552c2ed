// The adaptive scheme's decisions taken from measured epochs rather than from its model
// (AdaptivePolicy::plan, docs/design.md section 6): the check of full precision and the trials of
// Vanilla's schedule. The model prices transfers by the idle link probe and counts hidden transfers
// as free, which they are not where the network stack shares the cores with the compute; and on
// tiny graphs or fast links the overlapped schedule and the codec can cost more than the exchanges
// they hide. So whole epochs are timed (the slowest rank's, without plan()) and compared:
// - Check of full precision: once the plan has an exchange at full precision, its first
//   1 + kFullCheckEpochs epochs (the first cold) are timed against the last warm epoch with every
//   exchange quantized; if the faster of the timed ones is slower by more than kFullCheckMargin,
//   full precision is given up. It is checked again kTrialGap epochs of the scheme later, then
//   after twice the previous wait each time (the model may put exchanges at full precision again;
//   their epochs are timed against the median of the scheme's latest, quantized, epochs), so that
//   a stall of the machine during the check does not keep the codec for the rest of the run; and
//   where Vanilla's schedule was kept since, the scheme's trials against it run the model's plans,
//   full precision allowed, judged on their own epochs, and a scheme that wins back brings full
//   precision back.
// - Trial of Vanilla's schedule: once the model prices all of Vanilla's exchanges (full precision,
//   nothing hidden) at most kTrialCommShare of the faster of the scheme's latest epochs (after its
//   first plan from traces; after a check of full precision, the check's timed epochs where it
//   kept full precision, else the epochs since), and no check is running, 1 + kFullCheckEpochs
//   epochs run Vanilla's schedule (the first cold). If the median of the latest timed trial epochs
//   (over every trial so far) beats the median of as many of the scheme's latest epochs (at most
//   kTrialSamples each) by more than kTrialMargin, and the fastest of them the fastest of those,
//   the run goes on with Vanilla's schedule. Either way the next trial comes kTrialGap epochs
//   later, then after twice the previous wait each time: of Vanilla's schedule while the scheme
//   runs, of the scheme (its plans as its last epoch left them, overlapped) while
//   Vanilla's runs, judged alike against Vanilla's latest epochs; so that a decision a stall of the
//   machine made is undone.
// Pure bookkeeping on numbers every rank shares (gathered epoch times, decisions common to all):
// every rank takes the same decisions.
#pragma once

#include <cstddef>
#include <vector>

namespace adaqp::assign {

class MeasuredSchedule {
 public:
  // Epochs timed after the cold one, in the check of full precision and in each trial (its first
  // epoch's full-precision buffers are new: over shared memory it ran 20-50% slower than the next).
  static constexpr size_t kFullCheckEpochs = 2;
  // How much slower than the quantized epoch the faster timed epoch at full precision may be: the
  // goal's tolerance, as the trials' below. (5% until 2026-12-07 kept full precision where
  // quantizing was 3-5% faster: at 4.8 Gbit/s GraphSAGE ran at 0.96x Vanilla's epoch, 0.92x since.)
  static constexpr double kFullCheckMargin = 0.02;
  // Vanilla's schedule is tried only where the model prices its exchanges at no more than this
  // share of the scheme's epoch: elsewhere it cannot win, and the trial's epochs would cost time.
  static constexpr double kTrialCommShare = 0.5;
  // ... and kept where its epochs were faster by more than this: the goal's tolerance, so that the
  // machine's jitter does not decide.
  static constexpr double kTrialMargin = 0.02;
  // A trial decides on the medians (and the fastest) of as many of each schedule's latest timed
  // epochs, up to this many. Epochs of one schedule jitter by 20-30% on a loaded 2-core machine,
  // so that one trial's two epochs against two could keep the slower schedule (2026-11-29: 200k
  // nodes over shared memory, 1.22x Vanilla for the rest of a run; 2026-12-02: one stalled epoch
  // of the scheme's two kept Vanilla's schedule, up to 1.2x Vanilla).
  static constexpr size_t kTrialSamples = 4;
  // The first wait after a lost trial: a run of E epochs spends about 3 log2(E / kTrialGap) epochs
  // on trials.
  static constexpr int kTrialGap = 16;

  // What one finished epoch looked like (identical on every rank).
  struct Epoch {
    double seconds = 0;     // the slowest rank's, without plan(); not above 0: not timed
    bool traced = false;    // some rank traced an exchange
    bool warm = false;      // at least two epochs have traced (the codec's cold start is behind)
    bool planned = false;   // the scheme has planned from traces
    bool any_full = false;  // the epoch's plan had an exchange at full precision
  };
  // How a trial that ended with an epoch came out: of Vanilla's schedule (kept for the epochs to
  // come, or lost) or of the scheme while Vanilla's ran (back, or lost).
  enum class TrialEnd { kNone, kVanillaKept, kVanillaLost, kSchemeBack, kSchemeLost };

  // `enabled`: the objective in seconds with measured times and more than one rank; else nothing
  // is ever decided here. `log`: this rank reports the decisions (rank 0).
  MeasuredSchedule(bool enabled, bool log);

  // Whether a trial should start before the next epoch: `any_full` as in Epoch, and
  // `vanilla_comm_s` the model's time for all of Vanilla's exchanges (neither matters for a trial
  // of the scheme).
  bool trial_due(bool any_full, double vanilla_comm_s) const;
  // A trial of Vanilla's schedule where the scheme runs (vanilla_schedule() false), else of the
  // scheme.
  void start_trial();
  // The bookkeeping after every epoch; kVanillaLost: the plans from before the trial come back
  // (and they ran the scheme's trial where it ends kSchemeBack).
  TrialEnd finish_epoch(const Epoch& e);

  // Whether the model may not put exchanges at full precision: given up by the last check, not
  // being checked again, and no trial of the scheme against a kept Vanilla's schedule running (the
  // scheme is tried as the model plans it; where it wins, full precision is back with it).
  bool full_precision_given_up() const {
    return full_given_up_ && full_checked_ && !(vanilla_schedule_ && trial_running_);
  }
  bool vanilla_schedule() const { return vanilla_schedule_; }
  // Whether the next epoch runs the scheme's overlapped schedule; else Vanilla's (no overlap, full
  // precision), for a trial of it or for as long as it is kept.
  bool overlap() const { return vanilla_schedule_ == trial_running_; }
  // Whether the next finish_epoch needs the epoch's time (the slowest rank's, gathered from every
  // rank): not while Vanilla's schedule is kept and its next trial is more than kTrialSamples
  // epochs away, since that trial reads only Vanilla's latest kTrialSamples epochs. An epoch given
  // without a time there counts down the wait alike.
  bool needs_epoch_time() const {
    return !(vanilla_schedule_ && !trial_running_ &&
             epochs_to_trial_ > static_cast<int>(kTrialSamples));
  }

 private:
  void check_full_precision(const Epoch& e);
  // Counts an epoch of the scheme towards the next check where full precision was given up, and
  // starts that check when due.
  void count_down_full_check();

  bool enabled_;
  bool log_;
  // The check of full precision: the latest warm epoch with every exchange quantized (where the
  // check runs again: the median of the scheme's latest epochs), the first epochs with an exchange
  // at full precision, the outcome, the checks that gave full precision up so far, and the epochs
  // before the next check.
  double quantized_epoch_s_ = 0;
  std::vector<double> full_epochs_s_;
  bool full_checked_ = false;
  bool full_given_up_ = false;
  int full_give_ups_ = 0;
  int epochs_to_full_check_ = 0;
  // The trials: whether one is running, the scheme's latest timed epochs (at most kTrialSamples),
  // as many of Vanilla's (its trials' timed epochs, and its epochs while kept), the running
  // trial's epochs, the trials so far, the epochs before the next may start, and the schedule in
  // use.
  bool trial_running_ = false;
  std::vector<double> recent_epochs_s_, vanilla_epochs_s_, trial_epochs_s_;
  int trials_ = 0;
  int epochs_to_trial_ = 0;
  bool vanilla_schedule_ = false;
};

}  // namespace adaqp::assign
