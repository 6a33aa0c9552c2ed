// WaitBound: the time a waiting process was stopped itself (here: asleep between two looks for
// longer than kOwnPauseS) is not counted; shorter gaps are, and so is a long look that runs.
#include "adaqp/common/wait_bound.h"

#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "adaqp/common/clock.h"

namespace adaqp {
namespace {

void bound_sleep_s(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Seconds until `bound` passes, looked at every millisecond; 30 s if it never does.
double seconds_until_passed(WaitBound& bound) {
  const double start = steady_now_s();
  while (!bound.passed()) {
    if (steady_now_s() - start > 30) return 30;
    bound_sleep_s(0.001);
  }
  return steady_now_s() - start;
}

TEST(WaitBound, PassesAtItsBoundWhenLookedAtOften) {
  WaitBound bound(0.3);
  EXPECT_FALSE(bound.passed());
  const double waited = seconds_until_passed(bound);
  EXPECT_GE(waited, 0.3 - 0.01);
  EXPECT_LT(waited, 5.0);
}

TEST(WaitBound, AGapOfMoreThanTheOwnPauseIsNotCounted) {
  WaitBound bound(0.5);
  bound_sleep_s(kOwnPauseS + 0.3);
  EXPECT_FALSE(bound.passed());
  // The half second is left whole: nothing of it was used before the gap.
  EXPECT_GE(seconds_until_passed(bound), 0.5 - 0.05);
}

// The thread's own CPU time (not the wall clock: a loaded host gives it a share of a core).
double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST(WaitBound, ALongLookThatRunsCounts) {
  WaitBound bound(0.5);
  const double cpu = thread_cpu_s();
  volatile uint64_t spins = 0;
  while (thread_cpu_s() - cpu < kOwnPauseS + 0.3) spins = spins + 1;
  EXPECT_TRUE(bound.passed());
}

TEST(WaitBound, ShortGapsAllCount) {
  WaitBound bound(0.5);
  for (int k = 0; k < 3; ++k) {
    static_cast<void>(bound.passed());  // a look every 0.2 s
    bound_sleep_s(0.2);
  }
  EXPECT_TRUE(bound.passed());
}

}  // namespace
}  // namespace adaqp
