// Writes under a temporary name (common/atomic_file.h): a reader sees the old file or the whole new
// one, an uncommitted writer leaves nothing, and the temporaries of a dead writer are removed while
// a live one's stay.
#include "adaqp/common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "adaqp/common/error.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

std::string committed_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(AtomicFile, TheOldFileStaysUntilCommitAndAnUncommittedWriterLeavesNothing) {
  test::TempDir tmp;
  const std::string path = tmp.str("params.bin");
  AtomicFile::write_text(path, "old");
  {
    AtomicFile f(path);
    f.write("new", 3);
    EXPECT_EQ(committed_text(path), "old");
    EXPECT_TRUE(fs::exists(temp_path(path)));
    f.commit();
  }
  EXPECT_EQ(committed_text(path), "new");
  EXPECT_FALSE(fs::exists(temp_path(path)));
  {
    AtomicFile f(path);
    f.write("lost", 4);
  }
  EXPECT_EQ(committed_text(path), "new");
  EXPECT_FALSE(fs::exists(temp_path(path)));
}

TEST(AtomicFile, AnUnwritableFolderIsAnInputErrorNamingTheFile) {
  test::TempDir tmp;
  const std::string path = tmp.str("absent/params.bin");
  try {
    AtomicFile f(path);
    FAIL() << "a file in a folder that does not exist was opened";
  } catch (const InputError& e) {
    EXPECT_TRUE(test::contains(e.what(), "params.bin")) << e.what();
  }
}

// A dead writer's temporaries (files and folders) go; a live one's (this process's parent, the
// test runner's shell or launcher) and other names stay.
TEST(AtomicFile, StaleTemporariesOfDeadWritersAreRemoved) {
  test::TempDir tmp;
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  int status = 0;
  ASSERT_EQ(waitpid(dead, &status, 0), dead);
  const std::string file = tmp.str("params.bin"), folder = tmp.str("partition");
  AtomicFile::write_text(temp_path(file, dead), "half");
  fs::create_directories(temp_path(folder, dead) + "/part-0");
  AtomicFile::write_text(temp_path(file, getppid()), "live");
  AtomicFile::write_text(tmp.str("metrics.jsonl"), "kept");
  EXPECT_EQ(remove_stale_temporaries(tmp.str("")), 2);
  EXPECT_FALSE(fs::exists(temp_path(file, dead)));
  EXPECT_FALSE(fs::exists(temp_path(folder, dead)));
  EXPECT_TRUE(fs::exists(temp_path(file, getppid())));
  EXPECT_TRUE(fs::exists(tmp.str("metrics.jsonl")));
  // Only names that start with the prefix.
  AtomicFile::write_text(temp_path(file, dead), "half");
  EXPECT_EQ(remove_stale_temporaries(tmp.str(""), "config.yaml"), 0);
  EXPECT_EQ(remove_stale_temporaries(tmp.str(""), "params.bin"), 1);
}

}  // namespace
}  // namespace adaqp
