// What a resumed run keeps of metrics.jsonl (train/epoch_loop.h metrics_kept_on_resume): the epoch
// records up to the resumed epoch, with the link model of the process that ran them, without the
// summary; a last line without its
// newline (a write a full disk cut short) is dropped and named; any other line that is not JSON is
// an error naming the file and the line.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/train/epoch_loop.h"
#include "test_util.h"

namespace adaqp {
namespace {

std::string write(const test::TempDir& dir, const std::string& text) {
  const std::string path = dir.str("metrics.jsonl");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

const std::string kRecords =
    "{\"event\":\"link_model\"}\n"
    "{\"epoch\":1,\"rank\":0}\n{\"epoch\":1,\"rank\":1}\n"
    "{\"epoch\":2,\"rank\":0}\n{\"epoch\":2,\"rank\":1}\n";

TEST(MetricsResume, KeepsTheEpochRecordsUpToTheResumedEpoch) {
  test::TempDir dir;
  int cut = -1;
  const std::string path = write(dir, kRecords + "{\"event\":\"summary\",\"epochs\":2}\n");
  EXPECT_EQ(metrics_kept_on_resume(path, 1, &cut),
            kRecords.substr(0, kRecords.find("{\"epoch\":2")));
  EXPECT_EQ(cut, 0);
  EXPECT_EQ(metrics_kept_on_resume(path, 2), kRecords);
}

// Each process of a resumed run writes its link model before its epochs: one stays where an epoch
// record kept follows it, and goes with the epochs it preceded.
TEST(MetricsResume, ALinkModelStaysWithTheEpochsItPreceded) {
  test::TempDir dir;
  const std::string second = "{\"event\":\"link_model\",\"probe_time_s\":2}\n";
  const std::string later = "{\"epoch\":3,\"rank\":0}\n{\"epoch\":3,\"rank\":1}\n";
  const std::string path = write(dir, kRecords + second + later + "{\"event\":\"summary\"}\n");
  EXPECT_EQ(metrics_kept_on_resume(path, 3), kRecords + second + later);
  EXPECT_EQ(metrics_kept_on_resume(path, 2), kRecords);
  EXPECT_EQ(metrics_kept_on_resume(path, 0), "");
}

TEST(MetricsResume, ALastRecordCutShortIsDroppedAndNamed) {
  test::TempDir dir;
  int cut = -1;
  const std::string path = write(dir, kRecords + "{\"epoch\":3,\"ra");
  EXPECT_EQ(metrics_kept_on_resume(path, 3, &cut), kRecords);
  EXPECT_EQ(cut, 6);
  // Cut at a record's end, before its newline: still a write that did not finish.
  write(dir, kRecords + "{\"epoch\":3,\"rank\":0}");
  EXPECT_EQ(metrics_kept_on_resume(path, 3, &cut), kRecords);
  EXPECT_EQ(cut, 6);
}

TEST(MetricsResume, ABrokenLineBeforeTheLastIsAnErrorNamingIt) {
  test::TempDir dir;
  const std::string path = write(dir, kRecords + "{\"epoch\":3,\"ra\n{\"epoch\":3,\"rank\":1}\n");
  try {
    metrics_kept_on_resume(path, 3);
    FAIL() << "a broken record was kept";
  } catch (const InputError& e) {
    EXPECT_TRUE(test::contains(e.what(), path + ": line 6: not a JSON record")) << e.what();
  }
}

// A metrics.jsonl that is not a file is named before anything reads it: a directory would read as
// empty, and opening a FIFO would wait for a writer for ever.
TEST(MetricsResume, APathThatIsNotARegularFileIsAnErrorNamingIt) {
  test::TempDir dir;
  const std::string fifo = dir.str("fifo.jsonl"), directory = dir.str("dir.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directory(directory);
  for (const std::string& path : {fifo, directory}) {
    try {
      metrics_kept_on_resume(path, 3);
      FAIL() << path << " was read";
    } catch (const InputError& e) {
      EXPECT_TRUE(test::contains(e.what(), path + ": is not a regular file")) << e.what();
    }
  }
}

}  // namespace
}  // namespace adaqp
