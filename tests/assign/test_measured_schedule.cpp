// The adaptive scheme's decisions from measured epochs (assign/measured_schedule.h), on epoch
// times given here: the check of full precision, the trials of Vanilla's schedule, their margins,
// windows and waits. (test_adaptive_assignment_mpi.cpp runs the same decisions through the policy
// over real exchanges, with epochs slowed by sleeping.)
#include <gtest/gtest.h>

#include "adaqp/assign/measured_schedule.h"

namespace adaqp::assign {
namespace {

using Epoch = MeasuredSchedule::Epoch;
using TrialEnd = MeasuredSchedule::TrialEnd;

// Epochs as the policy reports them: the first two trace at the largest width (the first cold),
// then epochs planned from traces, quantized or with an exchange at full precision.
constexpr Epoch kColdTrace{1.0, true, false, false, false};
Epoch warm_trace(double s) {
  return {s, true, true, false, false};
}
Epoch quantized(double s) {
  return {s, true, true, true, false};
}
Epoch full(double s) {
  return {s, false, true, true, true};
}

// The first two traced epochs (the second, warm, is the quantized reference: `quantized_s`), then
// three at full precision: the cold one and the two timed.
MeasuredSchedule checked(double quantized_s, double timed1, double timed2) {
  MeasuredSchedule s(/*enabled=*/true, /*log=*/false);
  s.finish_epoch(kColdTrace);
  s.finish_epoch(warm_trace(quantized_s));
  for (double t : {100.0, timed1, timed2}) EXPECT_EQ(s.finish_epoch(full(t)), TrialEnd::kNone);
  return s;
}

// A trial from now (due with Vanilla's exchanges free in the model): its cold epoch, then two
// timed ones; returns how it ended.
TrialEnd trial(MeasuredSchedule& s, double timed1, double timed2) {
  EXPECT_TRUE(s.trial_due(/*any_full=*/true, /*vanilla_comm_s=*/0.0));
  s.start_trial();
  EXPECT_FALSE(s.overlap());
  EXPECT_EQ(s.finish_epoch(full(100.0)), TrialEnd::kNone);
  EXPECT_EQ(s.finish_epoch(full(timed1)), TrialEnd::kNone);
  return s.finish_epoch(full(timed2));
}

TEST(MeasuredSchedule, FullPrecisionSlowerThanTheMarginIsGivenUp) {
  // The faster timed epoch against the quantized one: at most 2% slower keeps full precision.
  static_assert(MeasuredSchedule::kFullCheckMargin == 0.02);
  EXPECT_FALSE(checked(1.0, 1.2, 1.02).full_precision_given_up());
  EXPECT_TRUE(checked(1.0, 1.2, 1.0201).full_precision_given_up());
  EXPECT_TRUE(checked(1.0, 1.2, 1.04).full_precision_given_up()) << "kept with a 5% margin";
  EXPECT_FALSE(checked(1.0, 0.7, 3.0).full_precision_given_up()) << "the faster of the two decides";
  // The cold epoch is not timed: 100 s there gave nothing up, and a fast one keeps nothing.
  MeasuredSchedule s(true, false);
  s.finish_epoch(kColdTrace);
  s.finish_epoch(warm_trace(1.0));
  for (double t : {0.1, 2.0, 2.0}) s.finish_epoch(full(t));
  EXPECT_TRUE(s.full_precision_given_up());
}

TEST(MeasuredSchedule, TheReferenceIsTheLatestWarmQuantizedEpoch) {
  MeasuredSchedule s(true, false);
  s.finish_epoch({0.5, true, false, false, false});  // cold: not a reference
  s.finish_epoch(full(2.0));                         // no reference yet: not counted
  s.finish_epoch(warm_trace(2.0));
  s.finish_epoch(quantized(1.0));  // the latest: 1.0
  for (double t : {9.0, 1.5, 1.6}) s.finish_epoch(full(t));
  EXPECT_TRUE(s.full_precision_given_up())
      << "1.5 would keep full precision against 2.0, not against 1.0";
  // A quantized epoch between full-precision ones starts the count again.
  MeasuredSchedule t(true, false);
  t.finish_epoch(kColdTrace);
  t.finish_epoch(warm_trace(1.0));
  for (double x : {9.0, 1.0}) t.finish_epoch(full(x));
  t.finish_epoch(quantized(1.0));
  for (double x : {9.0, 3.0}) t.finish_epoch(full(x));
  EXPECT_FALSE(t.full_precision_given_up()) << "only two epochs of the second run so far";
  t.finish_epoch(full(3.0));
  EXPECT_TRUE(t.full_precision_given_up());
  // Decided until the check comes again: later epochs at full precision change nothing.
  for (int i = 0; i < 5; ++i) t.finish_epoch(full(0.1));
  EXPECT_TRUE(t.full_precision_given_up());
}

// `n` epochs of the scheme with every exchange quantized, each `s` long; expects full precision
// given up before each.
void quantized_epochs(MeasuredSchedule& schedule, int n, double s) {
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(schedule.full_precision_given_up()) << "epoch " << i << " of " << n;
    EXPECT_EQ(schedule.finish_epoch(quantized(s)), TrialEnd::kNone);
  }
}

TEST(MeasuredSchedule, GivenUpFullPrecisionIsCheckedAgainAfterDoublingWaits) {
  // Given up (2.0 against 1.0), then kTrialGap quantized epochs of 1.0: the model may put
  // exchanges at full precision again, and their epochs are checked as before. Within the margin
  // (1.01): full precision is back, and stays.
  MeasuredSchedule back = checked(1.0, 2.0, 2.0);
  quantized_epochs(back, MeasuredSchedule::kTrialGap, 1.0);
  EXPECT_FALSE(back.full_precision_given_up()) << "checked again";
  EXPECT_FALSE(back.trial_due(/*any_full=*/true, 0.0)) << "the check before a trial";
  for (double t : {100.0, 3.0, 1.01}) back.finish_epoch(full(t));
  EXPECT_FALSE(back.full_precision_given_up());
  for (int i = 0; i < 8 * MeasuredSchedule::kTrialGap; ++i) back.finish_epoch(full(1.01));
  EXPECT_FALSE(back.full_precision_given_up()) << "kept full precision is not checked again";
  // Slower again (1.2): given up for twice the wait, then checked once more.
  MeasuredSchedule again = checked(1.0, 2.0, 2.0);
  quantized_epochs(again, MeasuredSchedule::kTrialGap, 1.0);
  for (double t : {100.0, 1.2, 1.2}) again.finish_epoch(full(t));
  quantized_epochs(again, 2 * MeasuredSchedule::kTrialGap, 1.0);
  EXPECT_FALSE(again.full_precision_given_up());
  for (double t : {100.0, 1.0, 1.0}) again.finish_epoch(full(t));
  EXPECT_FALSE(again.full_precision_given_up());
  // The model keeps every exchange quantized: the check waits, nothing else changes.
  MeasuredSchedule waits = checked(1.0, 2.0, 2.0);
  quantized_epochs(waits, MeasuredSchedule::kTrialGap, 1.0);
  for (int i = 0; i < 40; ++i) waits.finish_epoch(quantized(1.0));
  EXPECT_FALSE(waits.full_precision_given_up());
  for (double t : {100.0, 1.0, 3.0}) waits.finish_epoch(full(t));
  EXPECT_FALSE(waits.full_precision_given_up());
}

// Full precision given up (2.0 against 1.0), two quantized epochs of `quantized_s`, Vanilla's
// schedule kept against them (0.5), then kTrialGap of its epochs of `vanilla_s` (the wait counts
// no epoch of Vanilla's schedule): the scheme's trial is due.
MeasuredSchedule vanilla_kept_after_give_up(double quantized_s, double vanilla_s) {
  MeasuredSchedule s = checked(1.0, 2.0, 2.0);
  EXPECT_TRUE(s.full_precision_given_up());
  quantized_epochs(s, 2, quantized_s);
  EXPECT_EQ(trial(s, 0.5, 0.5), TrialEnd::kVanillaKept);
  for (int i = 0; i < MeasuredSchedule::kTrialGap; ++i) {
    EXPECT_TRUE(s.full_precision_given_up()) << "epoch " << i << " of Vanilla's schedule";
    s.finish_epoch(full(vanilla_s));
  }
  EXPECT_TRUE(s.trial_due(false, 0.0));
  return s;
}

TEST(MeasuredSchedule, ASchemeThatWinsBackFromVanillasScheduleBringsFullPrecisionBack) {
  // The scheme's trial runs the model's plans, full precision allowed; where it wins (1.0 against
  // Vanilla's latest 1.2), full precision is back, and stays.
  for (const bool wins : {true, false}) {
    MeasuredSchedule s = vanilla_kept_after_give_up(1.0, wins ? 1.2 : 0.5);
    s.start_trial();
    EXPECT_FALSE(s.full_precision_given_up()) << "the scheme's trial: the model's plans";
    for (double t : {100.0, 1.0, 1.0}) s.finish_epoch(full(t));
    EXPECT_EQ(s.vanilla_schedule(), !wins);
    EXPECT_EQ(s.full_precision_given_up(), !wins) << (wins ? "won" : "lost");
    if (!wins) continue;
    for (int i = 0; i < 8 * MeasuredSchedule::kTrialGap; ++i) s.finish_epoch(full(1.0));
    EXPECT_FALSE(s.full_precision_given_up());
  }
  // The quantized scheme's epochs from before Vanilla's schedule was kept (2.0, stalled) do not
  // weigh in: the trial's 0.95 and 0.95 against Vanilla's latest 1.0 and 1.0 win.
  MeasuredSchedule stale = vanilla_kept_after_give_up(2.0, 1.0);
  stale.start_trial();
  for (double t : {100.0, 0.95, 0.95}) stale.finish_epoch(full(t));
  EXPECT_FALSE(stale.vanilla_schedule());
  EXPECT_FALSE(stale.full_precision_given_up());
  // Where the winning trial's plans had nothing at full precision, nothing comes back.
  MeasuredSchedule none = vanilla_kept_after_give_up(1.0, 1.2);
  none.start_trial();
  for (double t : {100.0, 1.0, 1.0}) none.finish_epoch(quantized(t));
  EXPECT_FALSE(none.vanilla_schedule());
  EXPECT_TRUE(none.full_precision_given_up());
}

TEST(MeasuredSchedule, ACheckAgainIsJudgedAgainstTheMedianOfTheLatestQuantizedEpochs) {
  // The latest four quantized epochs 1.0, 1.0, 1.0 and a stalled 3.0: against their median, 1.0,
  // full precision's 1.2 is slower by more than the margin (against the latest epoch alone it
  // would come back).
  MeasuredSchedule stalled = checked(1.0, 2.0, 2.0);
  quantized_epochs(stalled, MeasuredSchedule::kTrialGap - 1, 1.0);
  stalled.finish_epoch(quantized(3.0));
  for (double t : {100.0, 1.2, 1.2}) stalled.finish_epoch(full(t));
  EXPECT_TRUE(stalled.full_precision_given_up());
  // A lucky last epoch (0.5) does not give full precision's 1.01 up either.
  MeasuredSchedule lucky = checked(1.0, 2.0, 2.0);
  quantized_epochs(lucky, MeasuredSchedule::kTrialGap - 1, 1.0);
  lucky.finish_epoch(quantized(0.5));
  for (double t : {100.0, 1.01, 1.01}) lucky.finish_epoch(full(t));
  EXPECT_FALSE(lucky.full_precision_given_up());
}

TEST(MeasuredSchedule, ColdUntracedOrUntimedEpochsAreNoReference) {
  MeasuredSchedule s(true, false);
  s.finish_epoch(kColdTrace);
  for (double t : {9.0, 5.0, 5.0}) s.finish_epoch(full(t));
  EXPECT_FALSE(s.full_precision_given_up()) << "the cold epoch is no quantized reference";
  s.finish_epoch({1.0, /*traced=*/false, true, true, false});
  for (double t : {9.0, 5.0, 5.0}) s.finish_epoch(full(t));
  EXPECT_FALSE(s.full_precision_given_up()) << "an untraced epoch is no quantized reference";
  s.finish_epoch(quantized(0.0));
  for (double t : {9.0, 5.0, 5.0}) s.finish_epoch(full(t));
  EXPECT_FALSE(s.full_precision_given_up()) << "an untimed epoch is no quantized reference";
  s.finish_epoch(quantized(1.0));
  for (double t : {9.0, 5.0, 0.0, 0.0}) s.finish_epoch(full(t));
  EXPECT_FALSE(s.full_precision_given_up()) << "untimed epochs at full precision do not count";
  s.finish_epoch(full(5.0));
  EXPECT_TRUE(s.full_precision_given_up()) << "a warm, traced, timed reference, then 3 timed";
}

TEST(MeasuredSchedule, DisabledDecidesNothing) {
  MeasuredSchedule s(/*enabled=*/false, false);
  s.finish_epoch(kColdTrace);
  s.finish_epoch(warm_trace(1.0));
  for (double t : {9.0, 5.0, 5.0, 5.0, 5.0}) s.finish_epoch(full(t));
  EXPECT_FALSE(s.full_precision_given_up());
  EXPECT_FALSE(s.trial_due(true, 0.0));
  EXPECT_TRUE(s.overlap());
}

TEST(MeasuredSchedule, ATrialIsDueWhereVanillasExchangesCostAtMostHalfAnEpoch) {
  // Kept full precision: its timed epochs (0.8 and 1.0) are the trial's reference.
  MeasuredSchedule s = checked(1.0, 0.8, 1.0);
  EXPECT_TRUE(s.trial_due(true, 0.4)) << "0.4 s of exchanges against the faster epoch's 0.8 s";
  EXPECT_FALSE(s.trial_due(true, 0.41));
  // Before the check of full precision has decided, no trial.
  MeasuredSchedule t(true, false);
  t.finish_epoch(kColdTrace);
  t.finish_epoch(warm_trace(1.0));
  for (double x : {1.0, 1.0}) t.finish_epoch(quantized(x));
  EXPECT_TRUE(t.trial_due(false, 0.0)) << "two planned epochs, all quantized";
  EXPECT_FALSE(t.trial_due(true, 0.0)) << "a check of full precision to run first";
  // Full precision given up: the epochs before the decision are no reference, two after it are.
  MeasuredSchedule given_up = checked(1.0, 2.0, 2.0);
  ASSERT_TRUE(given_up.full_precision_given_up());
  EXPECT_FALSE(given_up.trial_due(false, 0.0));
  given_up.finish_epoch(quantized(1.0));
  EXPECT_FALSE(given_up.trial_due(false, 0.0));
  given_up.finish_epoch(quantized(1.0));
  EXPECT_TRUE(given_up.trial_due(false, 0.5));
  EXPECT_FALSE(given_up.trial_due(false, 0.51));
  // An untimed epoch is no reference either.
  MeasuredSchedule v(true, false);
  v.finish_epoch(kColdTrace);
  v.finish_epoch(warm_trace(1.0));
  v.finish_epoch(quantized(1.0));
  v.finish_epoch(quantized(0.0));
  EXPECT_FALSE(v.trial_due(false, 0.0)) << "one timed planned epoch";
  // Too few planned epochs to compare with.
  MeasuredSchedule u(true, false);
  u.finish_epoch(kColdTrace);
  u.finish_epoch(warm_trace(1.0));
  u.finish_epoch(quantized(1.0));
  EXPECT_FALSE(u.trial_due(false, 0.0));
}

TEST(MeasuredSchedule, VanillaIsKeptWhenFasterByMoreThanTheMargin) {
  // Reference: median of 1.0 and 1.0. Vanilla's median 0.98: 0.98 * 1.02 < 1 keeps it.
  MeasuredSchedule kept = checked(1.0, 1.0, 1.0);
  EXPECT_EQ(trial(kept, 0.97, 0.99), TrialEnd::kVanillaKept);
  EXPECT_TRUE(kept.vanilla_schedule());
  EXPECT_FALSE(kept.overlap());
  EXPECT_FALSE(kept.trial_due(true, 0.0));
  for (double t : {5.0, 5.0, 5.0}) EXPECT_EQ(kept.finish_epoch(full(t)), TrialEnd::kNone);
  EXPECT_TRUE(kept.vanilla_schedule()) << "until a trial of the scheme, kTrialGap epochs later";
  // 0.99 * 1.02 > 1: within the margin, the scheme stays.
  MeasuredSchedule lost = checked(1.0, 1.0, 1.0);
  EXPECT_EQ(trial(lost, 0.99, 0.99), TrialEnd::kVanillaLost);
  EXPECT_FALSE(lost.vanilla_schedule());
  EXPECT_TRUE(lost.overlap());
}

TEST(MeasuredSchedule, OneStalledEpochOfTheSchemeDoesNotKeepVanilla) {
  // The scheme's two timed epochs 1.0 and 1.6 (a stall): their median 1.3 against Vanilla's 1.225
  // would keep Vanilla's schedule, but its fastest epoch (1.2) is slower than the scheme's (1.0).
  MeasuredSchedule s = checked(1.0, 1.0, 1.6);
  EXPECT_EQ(trial(s, 1.2, 1.25), TrialEnd::kVanillaLost);
  EXPECT_FALSE(s.vanilla_schedule());
  // Faster in both (its fastest 0.9 against 1.0, its median 0.95 against 1.3): kept.
  MeasuredSchedule faster = checked(1.0, 1.0, 1.6);
  EXPECT_EQ(trial(faster, 0.9, 1.0), TrialEnd::kVanillaKept);
}

// A trial of the scheme from now (Vanilla's schedule kept): its cold epoch, then two timed ones.
TrialEnd scheme_trial(MeasuredSchedule& s, double timed1, double timed2) {
  EXPECT_TRUE(s.trial_due(/*any_full=*/true, /*vanilla_comm_s=*/0.0));
  s.start_trial();
  EXPECT_TRUE(s.overlap()) << "the scheme's trial runs the overlapped schedule";
  EXPECT_EQ(s.finish_epoch(full(100.0)), TrialEnd::kNone);
  EXPECT_EQ(s.finish_epoch(full(timed1)), TrialEnd::kNone);
  return s.finish_epoch(full(timed2));
}

TEST(MeasuredSchedule, AKeptVanillaScheduleIsTriedAgainstTheSchemeAfterAWait) {
  // Vanilla kept against the scheme's 1.0 and 2.0 (its 0.9 and 0.9 win in both statistics); then
  // its epochs take 1.2. After kTrialGap of them the scheme's trial (1.0, 1.0; with its check's
  // epochs, median 1.0 and fastest 1.0 against Vanilla's last four at 1.2) brings it back.
  MeasuredSchedule s = checked(1.0, 1.0, 2.0);
  ASSERT_EQ(trial(s, 0.9, 0.9), TrialEnd::kVanillaKept);
  for (int i = 0; i < MeasuredSchedule::kTrialGap; ++i) {
    EXPECT_FALSE(s.trial_due(true, 0.0)) << "epoch " << i << " of the wait";
    EXPECT_FALSE(s.overlap());
    EXPECT_EQ(s.finish_epoch(full(1.2)), TrialEnd::kNone);
  }
  EXPECT_EQ(scheme_trial(s, 1.0, 1.0), TrialEnd::kSchemeBack);
  EXPECT_FALSE(s.vanilla_schedule());
  EXPECT_TRUE(s.overlap());
  // Where Vanilla's epochs stay faster (0.9), the scheme's trial loses and the next one waits
  // twice as long.
  MeasuredSchedule v = checked(1.0, 1.0, 2.0);
  ASSERT_EQ(trial(v, 0.9, 0.9), TrialEnd::kVanillaKept);
  for (int i = 0; i < MeasuredSchedule::kTrialGap; ++i) v.finish_epoch(full(0.9));
  EXPECT_EQ(scheme_trial(v, 1.0, 1.0), TrialEnd::kSchemeLost);
  EXPECT_TRUE(v.vanilla_schedule());
  EXPECT_FALSE(v.overlap());
  for (int i = 0; i < 2 * MeasuredSchedule::kTrialGap; ++i) {
    EXPECT_FALSE(v.trial_due(true, 0.0)) << "epoch " << i << " of the wait";
    v.finish_epoch(full(0.9));
  }
  EXPECT_EQ(scheme_trial(v, 0.95, 0.95), TrialEnd::kSchemeLost);
}

TEST(MeasuredSchedule, AKeptVanillaScheduleNeedsOnlyTheEpochsItsNextTrialReads) {
  // As above: Vanilla kept (0.9, 0.9), its epochs then take 1.2, and the scheme's trial (1.0,
  // 1.0) brings the scheme back against Vanilla's last four. The epochs before those four are not
  // needed: given without a time, the trial comes as soon and ends alike. Were the last four not
  // needed either, Vanilla's trial epochs (0.9) would decide and the scheme would lose.
  for (bool timed_early : {true, false}) {
    MeasuredSchedule s = checked(1.0, 1.0, 2.0);
    EXPECT_TRUE(s.needs_epoch_time()) << "the scheme runs";
    ASSERT_EQ(trial(s, 0.9, 0.9), TrialEnd::kVanillaKept);
    constexpr int kLast = static_cast<int>(MeasuredSchedule::kTrialSamples);
    for (int i = 0; i < MeasuredSchedule::kTrialGap; ++i) {
      const bool read = i >= MeasuredSchedule::kTrialGap - kLast;
      EXPECT_EQ(s.needs_epoch_time(), read) << "epoch " << i << " of the wait";
      EXPECT_FALSE(s.trial_due(true, 0.0)) << "epoch " << i << " of the wait";
      s.finish_epoch(full(s.needs_epoch_time() || timed_early ? 1.2 : 0.0));  // as the policy
    }
    EXPECT_TRUE(s.needs_epoch_time()) << "the trial's epochs";
    EXPECT_EQ(scheme_trial(s, 1.0, 1.0), TrialEnd::kSchemeBack)
        << "early epochs timed: " << timed_early;
  }
}

TEST(MeasuredSchedule, ALostTrialRunsAgainAfterDoublingWaits) {
  MeasuredSchedule s = checked(1.0, 1.0, 1.0);
  ASSERT_EQ(trial(s, 2.0, 2.0), TrialEnd::kVanillaLost);
  for (int gap : {MeasuredSchedule::kTrialGap, 2 * MeasuredSchedule::kTrialGap}) {
    for (int i = 0; i < gap; ++i) {
      EXPECT_FALSE(s.trial_due(true, 0.0)) << "epoch " << i << " of the wait of " << gap;
      s.finish_epoch(full(1.0));
    }
    ASSERT_EQ(trial(s, 2.0, 2.0), TrialEnd::kVanillaLost) << "after " << gap << " epochs";
  }
}

TEST(MeasuredSchedule, TheLatestEpochsOfEachScheduleDecide) {
  // First trial lost (2.0 against 1.0). Then the scheme's epochs are slow (1.5) and the second
  // trial fast (1.0, 1.0): the medians of the last four of each schedule, 1.5 for the scheme and
  // 1.5 for Vanilla's (2.0, 2.0, 1.0, 1.0; its second trial alone would say 1.0), tie: the scheme
  // stays.
  MeasuredSchedule s = checked(1.0, 1.0, 1.0);
  ASSERT_EQ(trial(s, 2.0, 2.0), TrialEnd::kVanillaLost);
  for (int i = 0; i < MeasuredSchedule::kTrialGap; ++i) s.finish_epoch(full(1.5));
  EXPECT_EQ(trial(s, 1.0, 1.0), TrialEnd::kVanillaLost);
  // A third trial after 32 epochs at 1.5: Vanilla's last four (1.0, 1.0, 1.48, 1.48) give 1.24,
  // kept; all six of its timed epochs would give 1.48, within the margin of 1.5.
  for (int i = 0; i < 2 * MeasuredSchedule::kTrialGap; ++i) s.finish_epoch(full(1.5));
  EXPECT_EQ(trial(s, 1.48, 1.48), TrialEnd::kVanillaKept);
}

}  // namespace
}  // namespace adaqp::assign
