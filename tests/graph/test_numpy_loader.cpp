#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

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

// feat.npy and edge_index.npy are read in blocks of 2^22 elements: arrays of several blocks come
// back exactly, and an error in the last block names its element.
TEST(NumpyLoader, ArraysOfSeveralBlocksRoundTripAndErrorsNameTheirElement) {
  // 100000 nodes of 43 in-edges each (4.3M: two blocks per row of edge_index) and 48 features
  // (4.8M values: two blocks), built directly: the generator is slow under the sanitizers.
  const int64_t n = 100000, in_degree = 43, width = 48;
  Graph g;
  g.name = "big";
  g.num_nodes = n;
  g.feat_dim = width;
  g.num_classes = 4;
  g.indptr.push_back(0);
  for (int64_t v = 0; v < n; ++v) {
    std::vector<int64_t> row;
    for (int64_t k = 0; k < in_degree; ++k) row.push_back((v * 7 + k * 2311) % n);
    std::sort(row.begin(), row.end());
    g.indices.insert(g.indices.end(), row.begin(), row.end());
    g.indptr.push_back(static_cast<int64_t>(g.indices.size()));
    g.labels.push_back(v % 4);
    (v < n / 2 ? g.train : v < 3 * n / 4 ? g.valid : g.test).push_back(v);
  }
  for (int64_t i = 0; i < n * width; ++i) g.features.push_back(static_cast<float>(i % 1000) / 8);
  ASSERT_GT(g.num_edges(), int64_t{1} << 22);
  ASSERT_GT(static_cast<int64_t>(g.features.size()), int64_t{1} << 22);
  TempDir tmp;
  save_numpy(g, tmp.str("big"));
  const Graph back = load_numpy(tmp.str("big"));
  EXPECT_EQ(back.indptr, g.indptr);
  EXPECT_EQ(back.indices, g.indices);
  EXPECT_EQ(back.features, g.features);

  // The last element of each file: edge_index's last target, feat's last value.
  const auto patch_last = [&](const std::string& name, const void* value, size_t size) {
    std::fstream f(tmp.str("big/" + name), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-static_cast<std::streamoff>(size), std::ios::end);
    f.write(static_cast<const char*>(value), static_cast<std::streamsize>(size));
  };
  const auto error_of_loading = [&] {
    try {
      load_numpy(tmp.str("big"));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const int64_t bad_id = n;
  patch_last("edge_index.npy", &bad_id, sizeof bad_id);
  EXPECT_THAT(error_of_loading(),
              HasSubstr(fmt::format("edge_index.npy: index [1, {}]: node id 100000 is out of range",
                                    g.num_edges() - 1)));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  patch_last("feat.npy", &nan, sizeof nan);
  EXPECT_THAT(error_of_loading(),
              HasSubstr("feat.npy: index [99999, 47]: value nan is not finite"));
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
  EXPECT_EQ(test::error_of<InputError>([&] { save_numpy(g, tmp.str("out")); }),
            "ogb: node 0: label 7 is out of range [0, 3) of the 3 classes");
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
