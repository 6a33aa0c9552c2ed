// Skips of the multi-process tests, in the three kinds tests/support/mpi_main.cpp tells apart: a
// test that needs more ranks than this run has is not applicable here (ctest runs it at the larger
// world sizes too); a test that needs a GPU is skipped where none is (never a CI failure: CI has no
// GPU); any other skip is a missing precondition, which fails the run when CI=true.
#pragma once

#include <gtest/gtest.h>

namespace adaqp::test {

// The first words of every world-size skip message and of every GPU skip message.
inline constexpr const char* kNotApplicableHere = "not applicable at this world size: ";
inline constexpr const char* kNeedsGpu = "needs a GPU: ";

}  // namespace adaqp::test

#define ADAQP_REQUIRE_RANKS(size, n)                                                              \
  if ((size) < (n))                                                                               \
  GTEST_SKIP() << ::adaqp::test::kNotApplicableHere << "needs at least " << (n) << " ranks, has " \
               << (size)
