#include "adaqp/assign/measured_schedule.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

namespace adaqp::assign {

namespace {

// Appends `latest` to `samples` and keeps the last kTrialSamples.
void keep_latest(std::vector<double>& samples, std::vector<double>::const_iterator first,
                 std::vector<double>::const_iterator last) {
  samples.insert(samples.end(), first, last);
  constexpr auto kKept = static_cast<std::ptrdiff_t>(MeasuredSchedule::kTrialSamples);
  if (static_cast<std::ptrdiff_t>(samples.size()) > kKept) {
    samples.erase(samples.begin(), samples.end() - kKept);
  }
}

// The median and the minimum of the last k (> 0) samples.
struct Summary {
  double median, fastest;
};
Summary summary_of_last(const std::vector<double>& samples, size_t k) {
  std::vector<double> last(samples.end() - static_cast<std::ptrdiff_t>(k), samples.end());
  std::sort(last.begin(), last.end());
  return {k % 2 == 1 ? last[k / 2] : (last[k / 2 - 1] + last[k / 2]) / 2, last.front()};
}

}  // namespace

MeasuredSchedule::MeasuredSchedule(bool enabled, bool log) : enabled_(enabled), log_(log) {}

bool MeasuredSchedule::trial_due(bool any_full, double vanilla_comm_s) const {
  // Tried also where full precision was measured slower than quantizing: that check timed the
  // overlapped schedule, whose progress thread and split aggregation Vanilla's does without (at
  // 200k nodes over shared memory both lost to Vanilla's, 2026-11-29).
  if (!enabled_ || trial_running_ || epochs_to_trial_ > 0) return false;
  if (vanilla_schedule_) return true;  // the scheme's trial, after its wait
  if (recent_epochs_s_.size() < kFullCheckEpochs) return false;
  if (any_full && !full_checked_ && quantized_epoch_s_ > 0) return false;  // that check first
  const double reference = *std::min_element(recent_epochs_s_.begin(), recent_epochs_s_.end());
  return vanilla_comm_s <= kTrialCommShare * reference;
}

void MeasuredSchedule::start_trial() {
  trial_running_ = true;
  // The scheme tried with full precision allowed again is not the quantized scheme whose epochs
  // (some of them stalled, which gave full precision up) lost to Vanilla's schedule: its trial's
  // epochs alone speak for it.
  if (vanilla_schedule_ && full_given_up_) recent_epochs_s_.clear();
}

MeasuredSchedule::TrialEnd MeasuredSchedule::finish_epoch(const Epoch& e) {
  if (vanilla_schedule_ && !trial_running_) {
    // The scheme's next trial is judged against Vanilla's latest epochs.
    if (e.seconds > 0) {
      const std::vector<double> one{e.seconds};
      keep_latest(vanilla_epochs_s_, one.begin(), one.end());
    }
    if (epochs_to_trial_ > 0) --epochs_to_trial_;
    return TrialEnd::kNone;
  }
  if (!trial_running_) {
    // The trial's reference: the scheme's own epochs after its first plan from traces (before it,
    // every message at the widest width).
    if (e.planned && e.seconds > 0) {
      const std::vector<double> one{e.seconds};
      keep_latest(recent_epochs_s_, one.begin(), one.end());
    }
    if (epochs_to_trial_ > 0) --epochs_to_trial_;
    check_full_precision(e);
    return TrialEnd::kNone;
  }
  trial_epochs_s_.push_back(e.seconds);
  if (trial_epochs_s_.size() < 1 + kFullCheckEpochs) return TrialEnd::kNone;
  trial_running_ = false;
  ++trials_;
  // The trial's timed epochs join the latest of the schedule it ran.
  const bool of_scheme = vanilla_schedule_;
  keep_latest(of_scheme ? recent_epochs_s_ : vanilla_epochs_s_, trial_epochs_s_.begin() + 1,
              trial_epochs_s_.end());
  trial_epochs_s_.clear();
  const size_t k = std::min(recent_epochs_s_.size(), vanilla_epochs_s_.size());
  const Summary vanilla = summary_of_last(vanilla_epochs_s_, k);
  const Summary scheme = summary_of_last(recent_epochs_s_, k);
  // The schedule tried replaces the one in use only where it is faster by the margin in both the
  // median and the fastest epoch: of two or three epochs a median is swayed by one stalled epoch
  // of the other schedule's (a stall of the machine, not of the schedule), which the fastest is
  // not.
  const Summary& tried = of_scheme ? scheme : vanilla;
  const Summary& in_use = of_scheme ? vanilla : scheme;
  const bool wins = tried.median * (1 + kTrialMargin) < in_use.median &&
                    tried.fastest * (1 + kTrialMargin) < in_use.fastest;
  if (wins) vanilla_schedule_ = !vanilla_schedule_;
  // The scheme's trial ran the model's plans, full precision allowed: where they had an exchange at
  // full precision and won, full precision is back (measured against Vanilla's schedule, which had
  // beaten the quantized scheme).
  const bool full_back = of_scheme && wins && full_given_up_ && e.any_full;
  if (full_back) {
    full_given_up_ = false;
    full_checked_ = true;
  }
  epochs_to_trial_ = kTrialGap << std::min(trials_ - 1, 16);
  if (log_) {
    const char* vanilla_name = "Vanilla's schedule (full precision, no overlap)";
    const char* scheme_name = "the adaptive scheme";
    spdlog::info(
        "adaptive: trial {} of {}: its epochs took {:.4f} s (fastest {:.4f} s), those of {} "
        "{:.4f} s (fastest {:.4f} s; medians of the last {}): {} {}, the other tried again in {} "
        "epochs",
        trials_, of_scheme ? scheme_name : vanilla_name, tried.median, tried.fastest,
        of_scheme ? vanilla_name : scheme_name, in_use.median, in_use.fastest, k,
        vanilla_schedule_ ? vanilla_name : scheme_name, wins ? "from now on" : "stays",
        epochs_to_trial_);
  }
  if (log_ && full_back) spdlog::info("adaptive: full precision is back where the model puts it");
  if (of_scheme) return wins ? TrialEnd::kSchemeBack : TrialEnd::kSchemeLost;
  return wins ? TrialEnd::kVanillaKept : TrialEnd::kVanillaLost;
}

void MeasuredSchedule::count_down_full_check() {
  if (!full_given_up_ || !full_checked_ || epochs_to_full_check_ == 0) return;
  if (--epochs_to_full_check_ > 0) return;
  full_checked_ = false;
  full_epochs_s_.clear();
}

void MeasuredSchedule::check_full_precision(const Epoch& e) {
  if (!enabled_) return;
  count_down_full_check();
  if (full_checked_ || e.seconds <= 0) return;
  const bool again = full_given_up_;
  if (!e.any_full) {
    // Checked again: every epoch since the last check quantized; their median, so that one
    // stalled or lucky epoch does not decide.
    if (e.traced && e.warm) {
      quantized_epoch_s_ = again && !recent_epochs_s_.empty()
                               ? summary_of_last(recent_epochs_s_, recent_epochs_s_.size()).median
                               : e.seconds;
    }
    full_epochs_s_.clear();
    return;
  }
  if (quantized_epoch_s_ <= 0) return;
  full_epochs_s_.push_back(e.seconds);
  if (full_epochs_s_.size() < 1 + kFullCheckEpochs) return;
  full_checked_ = true;
  const double best = *std::min_element(full_epochs_s_.begin() + 1, full_epochs_s_.end());
  full_given_up_ = best > quantized_epoch_s_ * (1 + kFullCheckMargin);
  if (full_given_up_) epochs_to_full_check_ = kTrialGap << std::min(full_give_ups_++, 16);
  // The trial's reference: epochs of what was decided here, the timed ones where it is kept.
  recent_epochs_s_.clear();
  if (!full_given_up_)
    keep_latest(recent_epochs_s_, full_epochs_s_.begin() + 1, full_epochs_s_.end());
  if (!log_) return;
  const std::string measured = fmt::format(
      "adaptive: epochs with exchanges at full precision took {:.4f} s, {:+.0f}% against {} "
      "({:.4f} s)",
      best, 100 * (best / quantized_epoch_s_ - 1),
      again ? "the latest quantized ones" : "a quantized one", quantized_epoch_s_);
  if (full_given_up_) {
    spdlog::info("{}: every exchange is quantized, full precision checked again in {} epochs",
                 measured, epochs_to_full_check_);
  } else if (again) {
    spdlog::info("{}: full precision is back where the model puts it", measured);
  } else {
    spdlog::debug("{}: full precision stays where the model puts it", measured);
  }
}

}  // namespace adaqp::assign
