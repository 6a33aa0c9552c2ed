#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "dataset_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;
using test::FileMap;
using test::npy_bytes;
using test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Entries of `parent` whose name starts with `prefix`.
std::vector<std::string> entries_starting_with(const std::string& parent,
                                               const std::string& prefix) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(parent)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

TEST(NumpyLoader, LoadsTinyDatasetExactly) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-npy");
  test::write_files(dir, test::tiny_numpy_files());
  const Graph g = load_numpy(dir + "/");
  EXPECT_EQ(g.name, "tiny-npy");
  EXPECT_EQ(g.num_nodes, 4);
  EXPECT_THAT(g.indptr, ElementsAre(0, 2, 3, 4, 5));
  EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
  EXPECT_EQ(g.feat_dim, 3);
  EXPECT_THAT(g.features, ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0));
  EXPECT_EQ(g.num_classes, 3);
  EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
  EXPECT_THAT(g.train, ElementsAre(0, 1));
  EXPECT_THAT(g.valid, ElementsAre(2));
  EXPECT_THAT(g.test, ElementsAre(3));
}

TEST(NumpyLoader, AcceptsInt64EdgesInt32ColumnLabelsAndVersion2Headers) {
  TempDir tmp;
  FileMap files = test::tiny_numpy_files();
  files["edge_index.npy"] =
      npy_bytes<int64_t>("<i8", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0}, false, 2);
  files["label.npy"] = npy_bytes<int32_t>("<i4", "(4, 1)", {0, 1, 2, 1});
  files["test.npy"] = npy_bytes<int32_t>("<i4", "(1,)", {3});
  test::write_files(tmp.str(), files);
  const Graph g = load_numpy(tmp.str());
  EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
  EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
  EXPECT_EQ(g.num_classes, 3);
  EXPECT_THAT(g.test, ElementsAre(3));
}

TEST(NumpyLoader, ReadsMultiLabelInEveryDtype) {
  const std::vector<uint8_t> bits = {1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1};
  const std::vector<float> floats(bits.begin(), bits.end());
  for (const std::string& label :
       {npy_bytes<float>("<f4", "(4, 3)", floats), npy_bytes<uint8_t>("|u1", "(4, 3)", bits),
        npy_bytes<uint8_t>("|b1", "(4, 3)", bits)}) {
    TempDir tmp;
    FileMap files = test::tiny_numpy_files();
    files["label.npy"] = label;
    test::write_files(tmp.str(), files);
    const Graph g = load_numpy(tmp.str());
    EXPECT_TRUE(g.multilabel);
    EXPECT_EQ(g.num_classes, 3);
    EXPECT_EQ(g.multilabels, bits);
    EXPECT_TRUE(g.labels.empty());
  }
}

TEST(NumpySave, RoundTripsSingleAndMultiLabelGraphs) {
  TempDir tmp;
  test::write_ogb(tmp.str("ogb"), test::tiny_ogb_text());
  const Graph single = load_ogb(tmp.str("ogb"), "");
  save_numpy(single, tmp.str("single"));
  EXPECT_EQ(fingerprint(load_numpy(tmp.str("single"))), fingerprint(single));
  // The files are in the documented dtypes.
  EXPECT_THAT(test::read_bytes(tmp.str("single/edge_index.npy")), HasSubstr("'descr': '<i8'"));
  EXPECT_THAT(test::read_bytes(tmp.str("single/feat.npy")), HasSubstr("'shape': (4, 3)"));
  EXPECT_THAT(test::read_bytes(tmp.str("single/valid.npy")), HasSubstr("'shape': (1,)"));

  Graph multi = single;
  multi.labels.clear();
  multi.multilabel = true;
  multi.num_classes = 2;
  multi.multilabels = {1, 0, 0, 0, 1, 1, 0, 1};
  save_numpy(multi, tmp.str("multi"));
  const Graph back = load_numpy(tmp.str("multi"));
  EXPECT_TRUE(back.multilabel);
  EXPECT_EQ(fingerprint(back), fingerprint(multi));
  EXPECT_THAT(test::read_bytes(tmp.str("multi/label.npy")), HasSubstr("'descr': '|u1'"));
  EXPECT_TRUE(entries_starting_with(tmp.str(), "multi.tmp-").empty());
}

TEST(NumpySave, RefusesExistingTargetAndLeavesNothingBehind) {
  TempDir tmp;
  test::write_ogb(tmp.str("ogb"), test::tiny_ogb_text());
  const Graph g = load_ogb(tmp.str("ogb"), "");
  fs::create_directories(tmp.str("taken"));
  try {
    save_numpy(g, tmp.str("taken"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(tmp.str("taken") + ": already exists"));
  }
  EXPECT_TRUE(fs::is_empty(tmp.str("taken")));
  EXPECT_TRUE(entries_starting_with(tmp.str(), "taken.tmp-").empty());
}

TEST(NumpySave, FailedWriteRemovesTheTemporaryDirectory) {
  TempDir tmp;
  test::write_ogb(tmp.str("ogb"), test::tiny_ogb_text());
  Graph g = load_ogb(tmp.str("ogb"), "");
  g.labels[0] = 7;  // invalid: the graph does not validate, so nothing may be written
  EXPECT_THROW(save_numpy(g, tmp.str("out")), InputError);
  EXPECT_FALSE(fs::exists(tmp.str("out")));
  // A target path so long that the temporary directory fits under PATH_MAX (4096) but the files
  // inside it do not: the first write fails after the temporary directory was created.
  std::string parent = tmp.str();
  while (parent.size() + 201 < 4075 - 12) parent += "/" + std::string(200, 'd');
  fs::create_directories(parent);
  const std::string target = parent + "/" + std::string(4075 - parent.size() - 1, 't');
  ASSERT_EQ(target.size(), 4075u);
  g.labels[0] = 0;
  try {
    save_numpy(g, target);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("edge_index.npy: cannot create"));
  }
  EXPECT_THAT(entries_starting_with(parent, "ttt"), ElementsAre());
}

}  // namespace
}  // namespace adaqp
