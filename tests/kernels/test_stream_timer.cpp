// The interval timer on the CPU: its sums, and the misuse the CUDA path refuses refused here too,
// so that the CPU tests catch a caller that would fail on a GPU.
#include "adaqp/kernels/stream_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "adaqp/common/error.h"

namespace adaqp::kernels {
namespace {

TEST(StreamTimer, SumsIntervalsUntilReset) {
  StreamTimer timer;
  EXPECT_EQ(timer.seconds(), 0.0);
  for (int k = 0; k < 2; ++k) {
    timer.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    timer.stop();
  }
  const double two = timer.seconds();
  EXPECT_GE(two, 0.010);
  EXPECT_EQ(timer.seconds(), two);  // reading does not reset
  timer.reset();
  EXPECT_EQ(timer.seconds(), 0.0);
}

TEST(StreamTimer, MisuseIsAnInvariantError) {
  StreamTimer timer;
  EXPECT_THROW(timer.stop(), InvariantError);
  timer.start();
  EXPECT_THROW(timer.start(), InvariantError);
  EXPECT_THROW(timer.seconds(), InvariantError);
  timer.stop();
  EXPECT_NO_THROW(timer.seconds());
  timer.start();
  timer.reset();  // a reset drops the open interval
  EXPECT_THROW(timer.stop(), InvariantError);
}

}  // namespace
}  // namespace adaqp::kernels
