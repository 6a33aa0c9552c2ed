// gtest main of the in-process test binaries (adaqp_unit_tests, adaqp_nn_tests): gtest's own, and
// after a run in which tests skipped and none failed, the skip marker (skip_marker.h).
#include <gtest/gtest.h>

#include <cstdio>
#include <exception>

#include "adaqp/common/cpu_features.h"

#include "skip_marker.h"

int main(int argc, char** argv) {
  // The kernels read ADAQP_MAX_CPU_ISA on first use, possibly inside an OpenMP region, where a
  // throw would end the process without its message.
  try {
    adaqp::cpu_isa();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int status = RUN_ALL_TESTS();
  const int skipped = ::testing::UnitTest::GetInstance()->skipped_test_count();
  if (status == 0 && skipped > 0)
    std::printf("%s: %d test(s) skipped\n", adaqp::test::kSkippedMarker, skipped);
  return status;
}
