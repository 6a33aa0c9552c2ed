// The line a test binary prints (rank 0 of a multi-process run) after a run in which tests skipped
// and none failed: ctest's SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt, cmake/GTestSuites.cmake)
// then shows the entry as skipped, not passed. A run with a failure never prints it: a skip must
// not hide a failure.
#pragma once

namespace adaqp::test {

inline constexpr const char* kSkippedMarker = "ADAQP_SKIPPED_TESTS";

}  // namespace adaqp::test
