// The OGB binary raw layout (raw/data.npz, raw/node-label.npz): exact loads of directories the test
// writes (deflated and stored archives), the same Graph as the CSV layout of the same data, the
// dtypes DatasetSaver and ogbn-papers100M use, NaN labels as unlabelled nodes, slices, detection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph_slice.h"
#include "dataset_files.h"
#include "graph_expect.h"
#include "ogb_binary_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

using test::FileMap;
using test::npy_bytes;
using test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Graph load_binary(const FileMap& files, bool deflate, const std::string& name = "tiny-bin") {
  TempDir tmp;
  const std::string dir = tmp.str(name);
  test::write_ogb_binary(dir, files, deflate);
  return load_ogb(dir, "");
}

TEST(OgbBinaryLoader, LoadsTinyDatasetExactly) {
  for (const bool deflate : {true, false}) {
    SCOPED_TRACE(deflate ? "deflated" : "stored");
    const Graph g = load_binary(test::tiny_ogb_binary_files(), deflate);
    EXPECT_EQ(g.name, "tiny-bin");
    EXPECT_EQ(g.num_nodes, 4);
    EXPECT_THAT(g.indptr, ElementsAre(0, 2, 3, 4, 5));
    EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
    EXPECT_EQ(g.feat_dim, 3);
    EXPECT_THAT(g.features, ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0));
    EXPECT_EQ(g.num_classes, 3);
    EXPECT_FALSE(g.multilabel);
    EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
    EXPECT_THAT(g.train, ElementsAre(0, 1));
    EXPECT_THAT(g.valid, ElementsAre(2));
    EXPECT_THAT(g.test, ElementsAre(3));

    TempDir tmp;
    test::write_ogb(tmp.str("csv"), test::tiny_ogb_text());
    test::expect_same_graph(g, load_ogb(tmp.str("csv"), ""));
  }
}

// A generated graph (heavy-tailed degrees, arbitrary float features) written in both layouts by
// the test's own writers loads as the same Graph.
TEST(OgbBinaryLoader, SameGraphAsTheCsvLayout) {
  GeneratorOptions o;
  o.num_nodes = 300;
  o.avg_degree = 6;
  o.heavy_tailed = true;
  o.seed = 11;
  const Graph g = generate_graph(o);
  TempDir tmp;
  test::write_ogb(tmp.str("csv"), test::ogb_text_of(g));
  const Graph csv = load_ogb(tmp.str("csv"), "");
  test::expect_same_graph(csv, g);
  for (const bool deflate : {true, false}) {
    SCOPED_TRACE(deflate ? "deflated" : "stored");
    test::expect_same_graph(load_binary(test::ogb_binary_files_of(g), deflate), csv);
  }
}

// IEEE binary16 bit patterns: 1, 0.5, -1.25, 2, 3, 0, 65504 (the largest), 2^-24 (the smallest
// subnormal), -0.
TEST(OgbBinaryLoader, ConvertsFloat16Float64AndIntegerFeaturesToFloat32) {
  FileMap files = test::tiny_ogb_binary_files();
  files["raw/data.npz/node_feat.npy"] = npy_bytes<uint16_t>(
      "<f2", "(4, 3)",
      {0x3c00, 0x0000, 0x4000, 0x3800, 0xbd00, 0x0000, 0x4200, 0x7bff, 0x0001, 0x8000, 0, 0});
  Graph g = load_binary(files, true);
  EXPECT_THAT(g.features,
              ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 65504, std::ldexp(1.0f, -24), -0.0f, 0, 0));

  files["raw/data.npz/node_feat.npy"] =
      npy_bytes<double>("<f8", "(4, 3)", {1, 0, 2, 0.5, -1.25, 0, 3, 3, 3, 1e30, 0, 0.1});
  g = load_binary(files, false);
  EXPECT_THAT(g.features, ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 1e30f, 0, 0.1f));

  // DatasetSaver keeps integer features as int64.
  files["raw/data.npz/node_feat.npy"] =
      npy_bytes<int64_t>("<i8", "(4, 3)", {1, 0, 2, -7, 16777216, 0, 3, 3, 3, 0, 0, 9});
  g = load_binary(files, true);
  EXPECT_THAT(g.features, ElementsAre(1, 0, 2, -7, 16777216, 0, 3, 3, 3, 0, 0, 9));
}

TEST(OgbBinaryLoader, ReadsClassIdsInEveryDtypeAndMultiLabelMatrices) {
  FileMap files = test::tiny_ogb_binary_files();
  const std::vector<std::string> class_ids = {
      npy_bytes<double>("<f8", "(4, 1)", {0, 1, 2, 1}),
      npy_bytes<float>("<f4", "(4,)", {0, 1, 2, 1}),
      npy_bytes<int32_t>("<i4", "(4,)", {0, 1, 2, 1}),
      npy_bytes<uint8_t>("|u1", "(4, 1)", {0, 1, 2, 1}),
  };
  for (const std::string& labels : class_ids) {
    files["raw/node-label.npz/node_label.npy"] = labels;
    const Graph g = load_binary(files, true);
    EXPECT_FALSE(g.multilabel);
    EXPECT_EQ(g.num_classes, 3);
    EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
  }
  files["raw/node-label.npz/node_label.npy"] =
      npy_bytes<float>("<f4", "(4, 2)", {1, 0, 0, 1, 1, 1, 0, 0});
  const Graph g = load_binary(files, false);
  EXPECT_TRUE(g.multilabel);
  EXPECT_EQ(g.num_classes, 2);
  EXPECT_THAT(g.multilabels, ElementsAre(1, 0, 0, 1, 1, 1, 0, 0));
  EXPECT_TRUE(g.labels.empty());
}

// ogbn-papers100M: float labels, NaN for the nodes outside every split. They hold class 0; the
// class count comes from the labelled nodes.
TEST(OgbBinaryLoader, NanLabelsAreUnlabelledNodesOutsideTheSplits) {
  FileMap files = test::tiny_ogb_binary_files();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  files["raw/node-label.npz/node_label.npy"] = npy_bytes<double>("<f8", "(4, 1)", {nan, 3, 1, 0});
  files["split/main/train.csv.gz"] = "1\n";
  files["split/main/valid.csv.gz"] = "";
  const Graph g = load_binary(files, true);
  EXPECT_THAT(g.labels, ElementsAre(0, 3, 1, 0));
  EXPECT_EQ(g.num_classes, 4);
  EXPECT_THAT(g.train, ElementsAre(1));
  EXPECT_TRUE(g.valid.empty());
  EXPECT_THAT(g.test, ElementsAre(3));
  EXPECT_NO_THROW(g.validate("tiny"));
}

TEST(OgbBinaryLoader, IgnoresEdgeFeaturesAndOtherMembers) {
  FileMap files = test::tiny_ogb_binary_files();
  files["raw/data.npz/edge_feat.npy"] = npy_bytes<float>("<f4", "(5, 2)", std::vector<float>(10));
  files["raw/data.npz/node_year.npy"] = npy_bytes<int64_t>("<i8", "(4, 1)", {2019, 2020, 1, 2});
  files["raw/node-label.npz/other.npy"] = npy_bytes<int64_t>("<i8", "(1,)", {7});
  const Graph g = load_binary(files, true);
  EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
  EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
}

TEST(OgbBinaryLoader, SlicesAreTheWholeGraphsSlices) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<FileMap> cases(3, test::tiny_ogb_binary_files());
  cases[1]["raw/node-label.npz/node_label.npy"] =
      npy_bytes<float>("<f4", "(4, 2)", {1, 0, 0, 1, 1, 1, 0, 0});
  cases[2]["raw/node-label.npz/node_label.npy"] = npy_bytes<double>("<f8", "(4,)", {0, 2, nan, 1});
  cases[2]["split/main/valid.csv.gz"] = "";
  GeneratorOptions o;
  o.num_nodes = 300;
  o.avg_degree = 6;
  o.heavy_tailed = true;
  o.seed = 4;
  cases.push_back(test::ogb_binary_files_of(generate_graph(o)));
  for (size_t c = 0; c < cases.size(); ++c) {
    for (const bool deflate : {true, false}) {
      TempDir tmp;
      const std::string dir = tmp.str("bin");
      test::write_ogb_binary(dir, cases[c], deflate);
      const Graph g = load_ogb(dir, "");
      for (int world = 1; world <= 4; ++world) {
        for (int rank = 0; rank < world; ++rank) {
          SCOPED_TRACE("case " + std::to_string(c) + (deflate ? " deflated" : " stored") +
                       ", rank " + std::to_string(rank) + " of " + std::to_string(world));
          test::expect_same_slice(load_ogb_slice(dir, "", rank, world), slice_of(g, rank, world));
        }
      }
    }
  }
}

TEST(OgbBinaryLoader, LoadDatasetDetectsTheLayoutAndPrefersCsv) {
  TempDir tmp;
  const std::string dir = tmp.str("both");
  test::write_ogb_binary(dir, test::tiny_ogb_binary_files(), true);
  DatasetSpec spec;
  spec.path = dir;
  EXPECT_EQ(resolve_dataset_format(spec), DatasetFormat::kOgb);
  EXPECT_THAT(load_dataset(spec).labels, ElementsAre(0, 1, 2, 1));
  // With raw/edge.csv.gz beside it, the CSV layout is read (its labels differ here).
  FileMap text = test::tiny_ogb_text();
  text["raw/node-label.csv.gz"] = "2\n1\n0\n1\n";
  test::write_ogb(dir, text);
  EXPECT_THAT(load_dataset(spec).labels, ElementsAre(2, 1, 0, 1));
}

TEST(OgbBinaryLoader, NamesBothLayoutsWhenNeitherIsThere) {
  TempDir tmp;
  FileMap files = test::tiny_ogb_binary_files();
  files.erase("raw/data.npz/edge_index.npy");
  files.erase("raw/data.npz/node_feat.npy");
  files.erase("raw/data.npz/num_nodes_list.npy");
  files.erase("raw/data.npz/num_edges_list.npy");
  test::write_ogb_binary(tmp.str("none"), files, true);
  const std::string error = test::error_of<InputError>([&] { load_ogb(tmp.str("none"), ""); });
  EXPECT_THAT(error, HasSubstr(tmp.str("none") + ": neither raw/edge.csv.gz nor raw/data.npz"));
  EXPECT_THAT(error, HasSubstr("the OGB CSV layout has"));
  EXPECT_THAT(error, HasSubstr("the OGB binary layout (ogb.io.DatasetSaver) raw/data.npz"));
}

// DatasetSaver.save_split writes split_dict.pt (a torch pickle): alone it is one clear error,
// beside the CSV files it is not read.
TEST(OgbBinaryLoader, SplitDictAloneIsAClearErrorAndIgnoredBesideCsvSplits) {
  TempDir tmp;
  const std::string dir = tmp.str("pt");
  FileMap files = test::tiny_ogb_binary_files();
  files["split/main/split_dict.pt"] = "PK\x03\x04 torch archive";
  test::write_ogb_binary(dir, files, true);
  EXPECT_THAT(load_ogb(dir, "").train, ElementsAre(0, 1));
  for (const char* name : {"train", "valid", "test"})
    std::filesystem::remove(dir + "/split/main/" + name + ".csv.gz");
  EXPECT_THAT(test::error_of<InputError>([&] { load_ogb(dir, ""); }),
              HasSubstr(dir + "/split/main/split_dict.pt: is a torch pickle "
                              "(ogb.io.DatasetSaver.save_split), which adaqp does not read: write "
                              "the split beside it as train.csv.gz, valid.csv.gz and test.csv.gz"));
}

}  // namespace
}  // namespace adaqp
