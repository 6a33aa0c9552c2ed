#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "adaqp/common/append_file.h"
#include "adaqp/common/error.h"
#include "test_util.h"

namespace adaqp {
namespace {

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(AppendFile, AppendsOrStartsAfresh) {
  test::TempDir tmp;
  const std::string path = tmp.str("metrics.jsonl");
  {
    AppendFile f(path, /*truncate=*/false);
    f.write("a\n");
  }
  {
    AppendFile f(path, /*truncate=*/false);
    f.write("b\n");
  }
  EXPECT_EQ(text_of(path), "a\nb\n");
  AppendFile f(path, /*truncate=*/true);
  f.write("c\n");
  EXPECT_EQ(text_of(path), "c\n");
}

// A job whose output directory is deleted under it stops at its next record, not at its end.
TEST(AppendFile, AFileRemovedUnderTheWriterFailsTheNextWrite) {
  test::TempDir tmp;
  const std::string path = tmp.str("out/metrics.jsonl");
  std::filesystem::create_directories(tmp.str("out"));
  AppendFile f(path, /*truncate=*/true);
  f.write("epoch 1\n");
  std::filesystem::remove_all(tmp.str("out"));
  EXPECT_EQ(test::error_of<InputError>([&] { f.write("epoch 2\n"); }),
            path + ": removed while the job wrote it (was its directory deleted?)");
}

}  // namespace
}  // namespace adaqp
