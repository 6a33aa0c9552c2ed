// The summary a run prints (train/epoch_loop.h describe): what its means cover after a resume, the
// exchanged bytes against full precision, the time split without the quantized modes' parts
// where nothing was quantized, and the start-up of one rank, the slowest.
#include <gtest/gtest.h>

#include <string>

#include "adaqp/train/epoch_loop.h"
#include "test_util.h"

namespace adaqp {
namespace {

RunSummary finished(int first_epoch, int epochs) {
  RunSummary s;
  s.metric = "accuracy";
  s.first_epoch = first_epoch;
  s.epochs = epochs;
  s.world_size = 2;
  s.device = "cpu";
  s.full_precision_bytes_per_epoch = 3.88e6;
  s.compute_s = 0.5;
  s.exposed_comm_s = 0.25;
  s.reduce_s = 0.25;
  return s;
}

TEST(RunSummaryText, AResumedRunSaysWhichEpochsItsMeansCover) {
  const std::string fresh = describe(finished(1, 200));
  EXPECT_TRUE(test::contains(fresh, "| 200 epochs on 2 worker(s) (cpu)")) << fresh;
  const std::string resumed = describe(finished(101, 200));
  EXPECT_TRUE(test::contains(resumed, "| epochs 101-200 (resumed) on 2 worker(s) (cpu)"))
      << resumed;
}

TEST(RunSummaryText, BytesAreAShareOfFullPrecision) {
  RunSummary near = finished(1, 3);
  near.bytes_per_epoch = 3.813e6;
  const std::string text = describe(near);
  EXPECT_TRUE(
      test::contains(text, "exchanges: 3.813 MB/epoch, 98% of full precision's 3.880 MB/epoch\n"))
      << text;
  RunSummary narrow = finished(1, 3);
  narrow.bytes_per_epoch = 0.485e6;
  const std::string less = describe(narrow);
  EXPECT_TRUE(test::contains(
      less, "exchanges: 0.485 MB/epoch, 12% of full precision's 3.880 MB/epoch (8.0x less)"))
      << less;
}

TEST(RunSummaryText, TheTimeSplitNamesTheQuantizedModesPartsOnlyWhereTheyRan) {
  const std::string vanilla = describe(finished(1, 3));
  EXPECT_TRUE(test::contains(vanilla,
                             "compute 50% | waiting for exchanges 25% | loss and gradient "
                             "all-reduce 25%"))
      << vanilla;
  EXPECT_FALSE(test::contains(vanilla, "bit-width assignment")) << vanilla;
  EXPECT_FALSE(test::contains(vanilla, "quantization")) << vanilla;
  RunSummary adaptive = finished(1, 3);
  adaptive.adaptive = true;
  adaptive.assign_s = 0.25;
  adaptive.quant_s = 0.0125;
  const std::string text = describe(adaptive);
  EXPECT_TRUE(test::contains(text,
                             "all-reduce 20% | bit-width assignment 20%; (de)quantization "
                             "12.5 ms/epoch"))
      << text;
}

// Each phase's slowest rank differs here (partition: rank 0, load: rank 1, startup: rank 2):
// their maxima add up to 4.5 s, no rank's start-up. The line gives rank 2's, the longest (3.2 s).
TEST(RunSummaryText, StartUpIsTheSlowestRanksOwnPhases) {
  RunSummary s = finished(1, 3);
  s.world_size = 3;
  s.seconds = {{2.0, 0.1, 0.5, 9.0}, {1.0, 1.5, 0.3, 9.0}, {1.2, 0.0, 2.0, 9.0}};
  const std::string text = describe(s);
  EXPECT_TRUE(test::contains(text,
                             "start-up of the slowest rank (rank 2): 3.20 s (partition 1.20 s | "
                             "load 0.00 s | startup 2.00 s)"))
      << text;
}

}  // namespace
}  // namespace adaqp
