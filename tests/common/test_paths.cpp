#include <gtest/gtest.h>

#include <filesystem>

#include "adaqp/common/paths.h"
#include "test_util.h"

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

// Two names of one directory (relative or absolute, a trailing separator, "..", a link) are one;
// a sibling that shares a prefix is not inside.
TEST(Paths, ResolvedDirectoriesAndWhatLiesWithin) {
  test::TempDir tmp;
  const std::filesystem::path root = tmp.path();
  std::filesystem::create_directories(root / "part");
  std::filesystem::create_symlink(root / "part", root / "link");
  EXPECT_EQ(resolved_directory(root / "part/"), resolved_directory(root / "x/../part"));
  EXPECT_EQ(resolved_directory(root / "link"), resolved_directory(root / "part"));
  EXPECT_TRUE(lies_within(root / "part", root / "part/"));
  EXPECT_TRUE(lies_within(root / "link/checkpoints", root / "part"));
  EXPECT_TRUE(lies_within(root / "part/a/b", root));
  EXPECT_FALSE(lies_within(root / "part2", root / "part"));
  EXPECT_FALSE(lies_within(root, root / "part"));
}

TEST(Paths, DirectoryNameIsItsLastComponent) {
  EXPECT_EQ(directory_name("data/cora/"), "cora");
  EXPECT_EQ(directory_name("/work/shared/datasets/ogbn-arxiv"), "ogbn-arxiv");
  EXPECT_EQ(directory_name("data/cora/raw/.."), "cora");
}

}  // namespace
}  // namespace adaqp
