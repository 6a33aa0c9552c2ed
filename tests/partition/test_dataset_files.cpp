#include "adaqp/partition/dataset_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/partition/partition_dir.h"
#include "dataset_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// Overwrites one byte of `p` at `offset`.
void flip_byte(const fs::path& p, int64_t offset) {
  std::fstream f(p, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(offset);
  const char c = static_cast<char>(f.get());
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x5A));
}

std::vector<DatasetFile> listed(const test::TempDir& dir) {
  const std::optional<std::vector<DatasetFile>> files = list_dataset_files(dir.str("ds"));
  EXPECT_TRUE(files.has_value());
  return files.value_or(std::vector<DatasetFile>{});
}

// The files a loader may read, sorted: raw/ and split/ (OGB), .npy, .npz and .json at the top
// (NumPy, GraphSAINT); not a run's output, a partition, a cache or notes kept beside them.
TEST(DatasetFiles, TheFilesALoaderMayReadSorted) {
  test::TempDir dir;
  write_file(dir.path() / "ds/raw/edge.csv.gz", "0,1\n");
  write_file(dir.path() / "ds/split/public/train.csv.gz", "0\n");
  write_file(dir.path() / "ds/label.npy", "");
  write_file(dir.path() / "ds/role.json", "{}");
  write_file(dir.path() / "ds/adj_full.npz", "z");
  write_file(dir.path() / "ds/README.md", "notes");
  write_file(dir.path() / "ds/run/partition/meta.yaml", "parts: 2\n");
  write_file(dir.path() / "ds/run/metrics.jsonl", "{}\n");
  write_file(dir.path() / "ds/processed/feat.npy", "cache");
  const std::vector<DatasetFile> files = listed(dir);
  std::vector<std::string> paths;
  for (const DatasetFile& f : files) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"adj_full.npz", "label.npy", "raw/edge.csv.gz",
                                             "role.json", "split/public/train.csv.gz"}));
  EXPECT_EQ(files[2].bytes, 4);
  EXPECT_EQ(files[1].bytes, 0);
  EXPECT_FALSE(list_dataset_files(dir.str("missing")).has_value());
  EXPECT_FALSE(list_dataset_files("").has_value());
}

// raw/ and split/ as links to directories elsewhere are listed as the directories would be (their
// files were left out: a changed label file went unseen, found by a review, 2026-12-08).
TEST(DatasetFiles, LinkedRawAndSplitDirectoriesAreListedUnderTheirNames) {
  test::TempDir dir;
  write_file(dir.path() / "store/raw/edge.csv.gz", "0,1\n");
  write_file(dir.path() / "store/split/public/train.csv.gz", "0\n");
  fs::create_directories(dir.path() / "ds");
  fs::create_directory_symlink(dir.path() / "store/raw", dir.path() / "ds/raw");
  fs::create_directory_symlink(dir.path() / "store/split", dir.path() / "ds/split");
  std::vector<std::string> paths;
  for (const DatasetFile& f : listed(dir)) paths.push_back(f.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"raw/edge.csv.gz", "split/public/train.csv.gz"}));
}

TEST(DatasetFiles, AChangeWithinEitherEndIsSeenOneInTheMiddleOfALargeFileIsNot) {
  test::TempDir dir;
  const fs::path big = dir.path() / "ds/feat.npy";
  write_file(big, std::string(static_cast<size_t>(3 * kDatasetFileEndBytes), 'x'));
  const std::vector<DatasetFile> before = listed(dir);
  flip_byte(big, 3 * kDatasetFileEndBytes - 1);  // the last MiB
  const std::string last = changed_dataset_file(before, listed(dir));
  EXPECT_TRUE(test::contains(last, "feat.npy had 3145728 bytes")) << last;
  flip_byte(big, 3 * kDatasetFileEndBytes - 1);  // back
  EXPECT_EQ(changed_dataset_file(before, listed(dir)), "");
  flip_byte(big, 17);  // the first MiB
  EXPECT_NE(changed_dataset_file(before, listed(dir)), "");
  flip_byte(big, 17);
  flip_byte(big, kDatasetFileEndBytes + 5);  // the middle MiB: documented as unseen
  EXPECT_EQ(changed_dataset_file(before, listed(dir)), "");
}

// The last 8 bytes of a file.
std::string last_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(-8, std::ios::end);
  std::string bytes(8, '\0');
  in.read(bytes.data(), 8);
  return bytes;
}

// A one-member gzip file ends with the CRC-32 (and size) of its content (a .npz archive with its
// members' CRCs): a file written with content changed in the middle shows at its end
// (docs/startup.md), by its trailer.
TEST(DatasetFiles, AGzipFilesEndCoversItsMiddle) {
  test::TempDir dir;
  const std::string path = (dir.path() / "ds/raw/edge.csv.gz").string();
  std::string text;
  uint64_t x = 1;
  while (text.size() < 8 * static_cast<size_t>(kDatasetFileEndBytes)) {
    x = x * 6364136223846793005u + 1442695040888963407u;  // incompressible enough
    text += std::to_string(x >> 20) + "," + std::to_string(x & 0xFFFFF) + "\n";
  }
  test::write_gz(path, text);
  const std::vector<DatasetFile> before = listed(dir);
  const std::string trailer = last_bytes(path);
  ASSERT_GT(before.at(0).bytes, 2 * kDatasetFileEndBytes);  // the middle is in neither end
  text[text.size() / 2] = text[text.size() / 2] == '1' ? '2' : '1';
  test::write_gz(path, text);
  EXPECT_NE(last_bytes(path).substr(0, 4), trailer.substr(0, 4));  // the content's CRC-32
  EXPECT_EQ(last_bytes(path).substr(4), trailer.substr(4));        // the same size
  EXPECT_NE(changed_dataset_file(before, listed(dir)), "");
}

TEST(DatasetFiles, AGoneOrResizedFileIsNamedAnAddedOneIsNotCompared) {
  test::TempDir dir;
  write_file(dir.path() / "ds/raw/label.csv", "1\n2\n");
  write_file(dir.path() / "ds/raw/edge.csv", "0,1\n");
  const std::vector<DatasetFile> before = listed(dir);
  write_file(dir.path() / "ds/raw/added.csv", "added later\n");
  EXPECT_EQ(changed_dataset_file(before, listed(dir)), "");
  write_file(dir.path() / "ds/raw/label.csv", "1\n");
  const std::string resized = changed_dataset_file(before, listed(dir));
  EXPECT_TRUE(test::contains(resized, "raw/label.csv had 4 bytes")) << resized;
  EXPECT_TRUE(test::contains(resized, "now 2 bytes")) << resized;
  fs::remove(dir.path() / "ds/raw/edge.csv");
  EXPECT_TRUE(test::contains(changed_dataset_file(before, listed(dir)), "raw/edge.csv (4 bytes"));
}

// Two copies of a dataset (PT-Scotch's ranks): a file differing, missing, or only in this rank's
// copy is named (an extra raw/edge.csv.gz beside a binary layout is read instead of it).
TEST(DatasetFiles, AnotherCopyIsComparedBothWays) {
  test::TempDir dir;
  write_file(dir.path() / "ds/raw/label.csv", "1\n2\n");
  const std::vector<DatasetFile> rank0 = listed(dir);
  EXPECT_EQ(differing_dataset_copy(rank0, listed(dir)), "");
  write_file(dir.path() / "ds/raw/edge.csv.gz", "stale\n");
  const std::string extra = differing_dataset_copy(rank0, listed(dir));
  EXPECT_TRUE(test::contains(extra, "raw/edge.csv.gz (6 bytes")) << extra;
  EXPECT_TRUE(test::contains(extra, "is here, not on rank 0")) << extra;
  write_file(dir.path() / "ds/raw/label.csv", "1\n3\n");
  const std::string differs = differing_dataset_copy(rank0, listed(dir));
  EXPECT_TRUE(test::contains(differs, "raw/label.csv has 4 bytes")) << differs;
  EXPECT_TRUE(test::contains(differs, "here, 4 bytes")) << differs;
  fs::remove(dir.path() / "ds/raw/label.csv");
  EXPECT_TRUE(test::contains(differing_dataset_copy(rank0, listed(dir)),
                             "raw/label.csv (4 bytes, CRC-32 of its ends"));
  // A directory or a dangling link in its place: not "missing" alone.
  fs::create_directory(dir.path() / "ds/raw/label.csv");
  const std::string directory = differing_dataset_copy(rank0, listed(dir));
  EXPECT_TRUE(test::contains(directory, "is missing here, or not a readable file")) << directory;
}

TEST(DatasetFiles, MetaYamlKeepsTheRecordAndRefusesAMalformedOne) {
  PartitionMeta m;
  m.dataset_name = "d";
  m.dataset_fingerprint = std::string(32, '0');
  m.method = "metis";
  m.parts = 1;
  m.counts.resize(1);
  m.dataset_files = {{"raw/edge.csv.gz", 123, 0xdeadbeef}, {"x y.npy", 0, 7}};
  const PartitionMeta back = parse_partition_meta(partition_meta_yaml(m), "meta.yaml");
  ASSERT_EQ(back.dataset_files.size(), 2u);
  EXPECT_EQ(back.dataset_files[0].path, "raw/edge.csv.gz");
  EXPECT_EQ(back.dataset_files[0].bytes, 123);
  EXPECT_EQ(back.dataset_files[0].ends_crc, 0xdeadbeefu);
  EXPECT_EQ(back.dataset_files[1].path, "x y.npy");
  std::string text = partition_meta_yaml(m);
  text.replace(text.find("deadbeef"), 8, "nothex!!");
  const std::string error =
      test::error_of<InputError>([&] { parse_partition_meta(text, "meta.yaml"); });
  EXPECT_TRUE(test::contains(error, "dataset_files[0]")) << error;
  // An entry that is no list: named alone, not the whole list printed.
  std::string mapped = partition_meta_yaml(m);
  const size_t line = mapped.find("x y.npy");
  ASSERT_NE(line, std::string::npos) << mapped;
  const size_t dash = mapped.rfind("- ", line), end = mapped.find('\n', line);
  ASSERT_NE(dash, std::string::npos) << mapped;
  mapped.replace(dash + 2, end - dash - 2, "{path: x, bytes: 1}");
  const std::string entry =
      test::error_of<InputError>([&] { parse_partition_meta(mapped, "meta.yaml"); });
  EXPECT_TRUE(test::contains(entry, "meta.yaml: dataset_files[1]: must be [path, bytes, CRC-32"))
      << entry;
  EXPECT_FALSE(test::contains(entry, "edge.csv.gz")) << entry;
}

TEST(DatasetFiles, AReusedPartitionOfChangedFilesIsRefused) {
  PartitionMeta made;
  made.method = "metis";
  made.parts = 2;
  made.dataset_files = {{"label.npy", 10, 1}};
  PartitionOptions opt;
  opt.parts = 2;
  opt.dataset_files = std::vector<DatasetFile>{{"label.npy", 10, 2}};
  const std::string error =
      test::error_of<ConfigError>([&] { require_partition_matches(made, opt, "P"); });
  EXPECT_TRUE(test::contains(error, "partition P was made from other dataset files: label.npy"))
      << error;
  opt.dataset_files = std::vector<DatasetFile>{{"label.npy", 10, 1}};
  EXPECT_EQ(test::error_of<ConfigError>([&] { require_partition_matches(made, opt, "P"); }), "");
  opt.dataset_files = std::nullopt;  // the dataset is not here: used as made
  EXPECT_EQ(test::error_of<ConfigError>([&] { require_partition_matches(made, opt, "P"); }), "");
}

}  // namespace
}  // namespace adaqp
