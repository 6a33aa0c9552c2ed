// The invariant checks (common/error.h): ADAQP_CHECK_EQ and its kin throw InvariantError naming the
// comparison and both values, evaluate each operand once, and pass silently when it holds. And the
// errors' text: control bytes written out.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

std::string failure_of(void (*check)()) {
  try {
    check();
  } catch (const InvariantError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckMacros, AFailedComparisonNamesItAndBothValues) {
  const std::string eq = failure_of([] {
    const int64_t rows = 3, expected = 4;
    ADAQP_CHECK_EQ(rows, expected, "halo rows");
  });
  EXPECT_NE(eq.find("check failed: rows == expected (3 == 4): halo rows"), std::string::npos) << eq;
  EXPECT_NE(eq.find("test_check_macros.cpp:"), std::string::npos) << eq;
  const std::string le = failure_of([] { ADAQP_CHECK_LE(7u, 2u, std::string("bytes")); });
  EXPECT_NE(le.find("7u <= 2u (7 <= 2): bytes"), std::string::npos) << le;
  const std::string text = failure_of([] { ADAQP_CHECK_NE(std::string("a"), "a", "names"); });
  EXPECT_NE(text.find("(a != a): names"), std::string::npos) << text;
}

TEST(CheckMacros, HoldingChecksPassAndEvaluateEachOperandOnce) {
  int calls = 0;
  auto next = [&calls] { return ++calls; };
  ADAQP_CHECK_EQ(next(), 1, "first call");
  ADAQP_CHECK_LT(next(), 3, "second call");
  ADAQP_CHECK_GE(next(), 3, "third call");
  ADAQP_CHECK_GT(2.5, 2.0, "doubles");
  EXPECT_EQ(calls, 3);
  EXPECT_THROW(ADAQP_CHECK_GT(next(), 4, "fourth call"), InvariantError);
  EXPECT_EQ(calls, 4);
}

// Messages quote input: a NUL or another control byte in it is written out, so that the message
// printed (a C string) is whole.
TEST(Errors, ControlBytesOfQuotedInputAreWrittenOut) {
  const std::string token = std::string("1\0,2\x7f", 5);
  const InputError e("edge.csv", "line 5", "source node id '" + token + "' is not a number");
  EXPECT_STREQ(e.what(), "edge.csv: line 5: source node id '1\\x00,2\\x7f' is not a number");
  EXPECT_STREQ(ConfigError("a\tb\nc\rd").what(), "a\tb\nc\\x0dd");
}

}  // namespace
}  // namespace adaqp
