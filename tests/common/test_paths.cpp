#include <gtest/gtest.h>

#include "adaqp/common/paths.h"

namespace adaqp {
namespace {

TEST(Paths, OneSpellingOfADirectory) {
  for (const char* spelling :
       {"out/part", "out/part/", "out/./part", "out/x/../part", "./out/part/"})
    EXPECT_EQ(directory_path(spelling), "out/part") << spelling;
  EXPECT_EQ(directory_path("/data/cora/"), "/data/cora");
  EXPECT_EQ(directory_path("/"), "/");
  EXPECT_EQ(directory_path("."), ".");
  EXPECT_EQ(directory_path("out/.."), ".");
}

TEST(Paths, DirectoryNameIsItsLastComponent) {
  EXPECT_EQ(directory_name("data/cora/"), "cora");
  EXPECT_EQ(directory_name("/work/shared/datasets/ogbn-arxiv"), "ogbn-arxiv");
  EXPECT_EQ(directory_name("data/cora/raw/.."), "cora");
}

}  // namespace
}  // namespace adaqp
