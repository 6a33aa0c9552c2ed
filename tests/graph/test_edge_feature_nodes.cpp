// dataset.features_from_edges on the OGB layouts (CSV and binary) and the NumPy layout: node
// features reduced from the edges' rows by hand on the tiny graph (in-edges, and both ends under
// symmetrize; mean and sum), the same on every layout and in every slice (the NumPy slices:
// test_distributed_start_mpi.cpp), and every malformed edge feature file named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"
#include "dataset_files.h"
#include "graph_expect.h"
#include "ogb_binary_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

using test::FileMap;
using test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The tiny graph's edges 0->1, 1->2, 2->3, 3->0, 1->0 with two features each, and no node-feat.
FileMap csv_text() {
  FileMap text = test::tiny_ogb_text();
  text.erase("raw/node-feat.csv.gz");
  text["raw/edge-feat.csv.gz"] = "1,2\n3,-1\n0.5,0\n2,2\n4,0\n";
  return text;
}

// `files` of the tiny graph without its node features `node_feat`, with those edge rows as the
// .npy `edge_feat`.
FileMap with_edge_rows(FileMap files, const std::string& node_feat, const std::string& edge_feat) {
  files.erase(node_feat);
  files[edge_feat] = test::npy_bytes<float>("<f4", "(5, 2)", {1, 2, 3, -1, 0.5f, 0, 2, 2, 4, 0});
  return files;
}

FileMap binary_files() {
  return with_edge_rows(test::tiny_ogb_binary_files(), "raw/data.npz/node_feat.npy",
                        "raw/data.npz/edge_feat.npy");
}

// The NumPy layout (PyG's data.edge_attr as edge_feat.npy), no feat.npy.
FileMap numpy_files() {
  return with_edge_rows(test::tiny_numpy_files(), "feat.npy", "edge_feat.npy");
}

EdgeFeatureNodes how(FeaturesFromEdges reduce, bool both_ends) {
  return EdgeFeatureNodes{reduce, both_ends};
}

// Node 0 gets edges 3->0 and 1->0, 1 gets 0->1, 2 gets 1->2, 3 gets 2->3; with both ends also
// 0->1 (node 0), 1->2 and 1->0 (node 1), 2->3 (node 2), 3->0 (node 3).
TEST(EdgeFeatureNodes, CsvInEdgesAndBothEndsMeanAndSum) {
  TempDir tmp;
  test::write_ogb(tmp.str(), csv_text());
  const Graph in_mean = load_ogb(tmp.str(), "", how(FeaturesFromEdges::kMean, false));
  EXPECT_EQ(in_mean.feat_dim, 2);
  EXPECT_THAT(in_mean.features, ElementsAre(3, 1, 1, 2, 3, -1, 0.5f, 0));
  EXPECT_THAT(load_ogb(tmp.str(), "", how(FeaturesFromEdges::kSum, false)).features,
              ElementsAre(6, 2, 1, 2, 3, -1, 0.5f, 0));
  EXPECT_THAT(load_ogb(tmp.str(), "", how(FeaturesFromEdges::kSum, true)).features,
              ElementsAre(7, 4, 8, 1, 3.5f, -1, 2.5f, 2));
  EXPECT_THAT(load_ogb(tmp.str(), "", how(FeaturesFromEdges::kMean, true)).features,
              ElementsAre(7.f / 3, 4.f / 3, 8.f / 3, 1.f / 3, 1.75f, -0.5f, 1.25f, 1));
  // The rest of the graph is the one node-feat would give.
  EXPECT_THAT(in_mean.indices, ElementsAre(1, 3, 0, 1, 2));
  EXPECT_THAT(in_mean.labels, ElementsAre(0, 1, 2, 1));
  in_mean.validate(tmp.str());
}

TEST(EdgeFeatureNodes, LoadDatasetTakesBothEndsFromSymmetrizeAndANodeWithoutEdgesGetsZeros) {
  TempDir tmp;
  FileMap text = csv_text();
  text["raw/num-node-list.csv.gz"] = "5\n";  // node 4: no edge
  text["raw/node-label.csv.gz"] = "0\n1\n2\n1\n0\n";
  test::write_ogb(tmp.str(), text);
  DatasetSpec spec;
  spec.path = tmp.str();
  spec.features_from_edges = FeaturesFromEdges::kMean;
  spec.transform.symmetrize = true;
  spec.transform.self_loops = true;
  EXPECT_THAT(load_dataset(spec).features,
              ElementsAre(7.f / 3, 4.f / 3, 8.f / 3, 1.f / 3, 1.75f, -0.5f, 1.25f, 1, 0, 0));
  spec.transform.symmetrize = false;
  EXPECT_THAT(load_dataset(spec).features, ElementsAre(3, 1, 1, 2, 3, -1, 0.5f, 0, 0, 0));
}

TEST(EdgeFeatureNodes, BinaryLayoutGivesTheCsvLayoutsRowsInEverySlice) {
  TempDir tmp;
  test::write_ogb(tmp.str("csv"), csv_text());
  for (const bool deflate : {true, false}) {
    const std::string dir = tmp.str(deflate ? "deflated" : "stored");
    test::write_ogb_binary(dir, binary_files(), deflate);
    for (const bool both : {false, true}) {
      const EdgeFeatureNodes h = how(FeaturesFromEdges::kMean, both);
      const Graph csv = load_ogb(tmp.str("csv"), "", h);
      const Graph g = load_ogb(dir, "", h);
      EXPECT_EQ(g.features, csv.features) << dir << (both ? ", both ends" : "");
      for (int world = 1; world <= 4; ++world) {
        for (int rank = 0; rank < world; ++rank) {
          SCOPED_TRACE(dir + ", rank " + std::to_string(rank) + " of " + std::to_string(world));
          test::expect_same_slice(load_ogb_slice(dir, "", rank, world, h),
                                  slice_of(g, rank, world));
          test::expect_same_slice(load_ogb_slice(tmp.str("csv"), "", rank, world, h),
                                  slice_of(csv, rank, world));
        }
      }
    }
  }
}

TEST(EdgeFeatureNodes, NumpyLayoutGivesTheCsvLayoutsGraph) {
  TempDir tmp;
  test::write_ogb(tmp.str("csv"), csv_text());
  test::write_files(tmp.str("numpy"), numpy_files());
  for (const FeaturesFromEdges reduce : {FeaturesFromEdges::kMean, FeaturesFromEdges::kSum}) {
    for (const bool both : {false, true}) {
      SCOPED_TRACE(std::string(to_string(reduce)) + (both ? ", both ends" : ""));
      const Graph csv = load_ogb(tmp.str("csv"), "", how(reduce, both));
      const Graph g = load_numpy(tmp.str("numpy"), how(reduce, both));
      EXPECT_EQ(g.num_nodes, 4);
      EXPECT_EQ(g.feat_dim, 2);
      EXPECT_EQ(g.features, csv.features);
      EXPECT_EQ(g.indptr, csv.indptr);
      EXPECT_EQ(g.indices, csv.indices);
      EXPECT_EQ(g.labels, csv.labels);
      EXPECT_EQ(g.train, csv.train);
      g.validate(tmp.str("numpy"));
    }
  }
  // Where the features come from the edges, N is label.npy's: a node no edge touches gets zeros.
  FileMap files = numpy_files();
  files["label.npy"] = test::npy_bytes<int64_t>("<i8", "(5,)", {0, 1, 2, 1, 0});
  files["valid.npy"] = test::npy_bytes<int64_t>("<i8", "(1,)", {2});
  files["test.npy"] = test::npy_bytes<int64_t>("<i8", "(1,)", {3});
  test::write_files(tmp.str("isolated"), files);
  EXPECT_THAT(load_numpy(tmp.str("isolated"), how(FeaturesFromEdges::kMean, false)).features,
              ElementsAre(3, 1, 1, 2, 3, -1, 0.5f, 0, 0, 0));
}

// A self-loop is its own reverse edge: under both ends its row counts once, as symmetrize keeps
// one copy of it.
TEST(EdgeFeatureNodes, ASelfLoopCountsOnceUnderBothEnds) {
  TempDir tmp;
  FileMap files = numpy_files();
  files["edge_index.npy"] = test::npy_bytes<int64_t>("<i8", "(2, 2)", {0, 0, 0, 1});
  files["edge_feat.npy"] = test::npy_bytes<float>("<f4", "(2, 1)", {1, 3});
  test::write_files(tmp.str(), files);
  EXPECT_THAT(load_numpy(tmp.str(), how(FeaturesFromEdges::kMean, true)).features,
              ElementsAre(2, 3, 0, 0));
  EXPECT_THAT(load_numpy(tmp.str(), how(FeaturesFromEdges::kSum, true)).features,
              ElementsAre(4, 3, 0, 0));
  EXPECT_THAT(load_numpy(tmp.str(), how(FeaturesFromEdges::kSum, false)).features,
              ElementsAre(1, 3, 0, 0));
}

std::string numpy_error(const FileMap& files, FeaturesFromEdges reduce = FeaturesFromEdges::kMean) {
  TempDir tmp;
  test::write_files(tmp.str(), files);
  return test::error_of<InputError>([&] { load_numpy(tmp.str(), how(reduce, false)); });
}

TEST(EdgeFeatureNodes, MalformedNumpyEdgeFeaturesAreNamed) {
  FileMap files = numpy_files();
  files.erase("edge_feat.npy");
  EXPECT_THAT(numpy_error(files), AllOf(HasSubstr("edge_feat.npy: dataset.features_from_edges"),
                                        HasSubstr("file not found")));
  files["edge_feat.npy"] = test::npy_bytes<float>("<f4", "(4, 2)", {1, 2, 3, -1, 0.5f, 0, 2, 2});
  EXPECT_THAT(numpy_error(files), AllOf(HasSubstr("edge_feat.npy: has dtype <f4 and shape (4, 2)"),
                                        HasSubstr("expected float32 (<f4) [5, F]")));
  files["edge_feat.npy"] =
      test::npy_bytes<double>("<f8", "(5, 2)", {1, 2, 3, -1, 0.5, 0, 2, 2, 4, 0});
  EXPECT_THAT(numpy_error(files), HasSubstr(".astype(numpy.float32)"));
  files["edge_feat.npy"] =
      test::npy_bytes<float>("<f4", "(5, 2)", {1, 2, 3, -1, 0.5f, NAN, 2, 2, 4, 0});
  EXPECT_THAT(numpy_error(files),
              HasSubstr("edge_feat.npy: index [2, 1]: value nan is not finite"));
  files["edge_feat.npy"] = test::npy_bytes<float>("<f4", "(5, 1)", {1, 0, 0, 3e38f, 3e38f});
  EXPECT_THAT(numpy_error(files, FeaturesFromEdges::kSum),
              AllOf(HasSubstr("edge_feat.npy: dataset.features_from_edges: node 0 feature 0"),
                    HasSubstr("beyond float32's range")));
  // Rows of no columns: named by the file (it read "features: have 0 columns" of the dataset).
  files["edge_feat.npy"] = test::npy_bytes<float>("<f4", "(5, 0)", {});
  EXPECT_THAT(numpy_error(files), HasSubstr("edge_feat.npy: dataset.features_from_edges: has rows "
                                            "of 0 columns"));
}

// Without node-feat, the labels are the first file num-node-list's count reaches: a count past
// what the file can hold is named there, before any allocation of its size (it asked for 2^62
// labels' memory at once).
TEST(EdgeFeatureNodes, ACsvNodeCountPastTheLabelsIsNamedByTheLabels) {
  TempDir tmp;
  FileMap text = csv_text();
  text["raw/num-node-list.csv.gz"] = "4611686018427387904\n";
  test::write_ogb(tmp.str(), text);
  EXPECT_THAT(test::error_of<InputError>(
                  [&] { load_ogb(tmp.str(), "", how(FeaturesFromEdges::kMean, false)); }),
              HasSubstr("raw/node-label.csv.gz: line 4: file ends after 4 lines, but "
                        "num-node-list.csv.gz says 4611686018427387904"));
}

// No edges, no rows to make features of: one error on every layout (it crashed the CSV reader
// under mean, and the layouts gave different widths).
TEST(EdgeFeatureNodes, ADatasetWithoutEdgesIsNamed) {
  TempDir tmp;
  FileMap text = csv_text();
  text["raw/edge.csv.gz"] = "";
  text["raw/num-edge-list.csv.gz"] = "0\n";
  text["raw/edge-feat.csv.gz"] = "";
  test::write_ogb(tmp.str("csv"), text);
  FileMap files = binary_files();
  files["raw/data.npz/edge_index.npy"] = test::npy_bytes<int64_t>("<i8", "(2, 0)", {});
  files["raw/data.npz/num_edges_list.npy"] = test::npy_bytes<int64_t>("<i8", "(1,)", {0});
  files["raw/data.npz/edge_feat.npy"] = test::npy_bytes<float>("<f4", "(0, 2)", {});
  test::write_ogb_binary(tmp.str("binary"), files, true);
  // Stored: edge_index's second copy skips no bytes, and its check of the member's CRC-32 still
  // holds (an internal error for a while on 2026-12-08).
  test::write_ogb_binary(tmp.str("stored"), files, false);
  FileMap arrays = numpy_files();
  arrays["edge_index.npy"] = test::npy_bytes<int64_t>("<i8", "(2, 0)", {});
  arrays["edge_feat.npy"] = test::npy_bytes<float>("<f4", "(0, 2)", {});
  test::write_files(tmp.str("numpy"), arrays);
  for (const FeaturesFromEdges reduce : {FeaturesFromEdges::kMean, FeaturesFromEdges::kSum}) {
    const EdgeFeatureNodes h = how(reduce, true);
    EXPECT_THAT(test::error_of<InputError>([&] { load_ogb(tmp.str("csv"), "", h); }),
                HasSubstr("edge-feat.csv.gz: dataset.features_from_edges: has no rows"));
    for (const char* binary : {"binary", "stored"}) {
      EXPECT_THAT(test::error_of<InputError>([&] { load_ogb(tmp.str(binary), "", h); }),
                  HasSubstr("member edge_feat.npy: dataset.features_from_edges: has no rows"))
          << binary;
    }
    EXPECT_THAT(test::error_of<InputError>([&] { load_numpy(tmp.str("numpy"), h); }),
                HasSubstr("edge_feat.npy: dataset.features_from_edges: has no rows"));
  }
}

std::string csv_error(const FileMap& text) {
  TempDir tmp;
  test::write_ogb(tmp.str(), text);
  return test::error_of<InputError>(
      [&] { load_ogb(tmp.str(), "", how(FeaturesFromEdges::kMean, false)); });
}

TEST(EdgeFeatureNodes, MalformedCsvEdgeFeaturesAreNamed) {
  FileMap text = csv_text();
  text.erase("raw/edge-feat.csv.gz");
  EXPECT_THAT(csv_error(text), AllOf(HasSubstr("edge-feat.csv.gz: dataset.features_from_edges"),
                                     HasSubstr("file not found")));
  text = csv_text();
  text["raw/edge-feat.csv.gz"] = "1,2\n3,-1\n0.5,0\n2,2\n";
  EXPECT_THAT(csv_error(text), AllOf(HasSubstr("edge-feat.csv.gz: line 4"),
                                     HasSubstr("num-edge-list.csv.gz says 5")));
  text["raw/edge-feat.csv.gz"] = "1,2\n3,-1\n0.5,0\n2,2\n4,0\n5,5\n";
  EXPECT_THAT(csv_error(text),
              AllOf(HasSubstr("edge-feat.csv.gz: line 6"), HasSubstr("more lines than the 5")));
  text["raw/edge-feat.csv.gz"] = "1,2\n3,-1\n0.5\n2,2\n4,0\n";
  EXPECT_THAT(csv_error(text),
              AllOf(HasSubstr("edge-feat.csv.gz: line 3"), HasSubstr("has 1 column, expected 2")));
  text["raw/edge-feat.csv.gz"] = "1,2\n3,-1\n0.5,nan\n2,2\n4,0\n";
  EXPECT_THAT(csv_error(text),
              AllOf(HasSubstr("edge-feat.csv.gz: line 3"), HasSubstr("column 2: 'nan'")));
  // Written transposed: line 1 wider than 5 rows of it could be in this file, refused before the
  // sums are sized by it.
  std::string wide;
  for (int c = 0; c < 100000; ++c) wide += c == 0 ? "0" : ",0";
  text["raw/edge-feat.csv.gz"] = wide + "\n" + wide + "\n";
  EXPECT_THAT(csv_error(text), AllOf(HasSubstr("edge-feat.csv.gz: line 1: has 100000 columns"),
                                     HasSubstr("cannot fit in this file")));
}

// Each row is within float32, their sum need not be: node 0's two edges (3->0, 1->0) sum beyond
// it, named by the file, the node and the column; their mean is fine.
TEST(EdgeFeatureNodes, ASumBeyondFloat32IsNamed) {
  FileMap text = csv_text();
  text["raw/edge-feat.csv.gz"] = "1,2\n3,-1\n0.5,0\n3e38,2\n3e38,0\n";
  TempDir tmp;
  test::write_ogb(tmp.str(), text);
  EXPECT_THAT(
      test::error_of<InputError>(
          [&] { load_ogb(tmp.str(), "", how(FeaturesFromEdges::kSum, false)); }),
      AllOf(HasSubstr("edge-feat.csv.gz: dataset.features_from_edges: node 0 feature 0: the sum"),
            HasSubstr("beyond float32's range")));
  EXPECT_FLOAT_EQ(load_ogb(tmp.str(), "", how(FeaturesFromEdges::kMean, false)).features[0], 3e38f);
}

std::string binary_error(const FileMap& files) {
  TempDir tmp;
  test::write_ogb_binary(tmp.str(), files, true);
  return test::error_of<InputError>(
      [&] { load_ogb(tmp.str(), "", how(FeaturesFromEdges::kSum, true)); });
}

TEST(EdgeFeatureNodes, MalformedBinaryEdgeFeaturesAreNamed) {
  FileMap files = binary_files();
  files.erase("raw/data.npz/edge_feat.npy");
  EXPECT_THAT(binary_error(files),
              AllOf(HasSubstr("data.npz: member edge_feat.npy: missing"),
                    HasSubstr("dataset.features_from_edges = sum makes node features")));
  files["raw/data.npz/edge_feat.npy"] =
      test::npy_bytes<float>("<f4", "(4, 2)", {1, 2, 3, -1, 0.5f, 0, 2, 2});
  EXPECT_THAT(binary_error(files),
              AllOf(HasSubstr("member edge_feat.npy"), HasSubstr("has 4 rows, expected E = 5")));
  files["raw/data.npz/edge_feat.npy"] =
      test::npy_bytes<double>("<f8", "(5, 2)", {1, 2, 3, -1, 0.5, 0, 2, 1e300, 4, 0});
  EXPECT_THAT(binary_error(files), AllOf(HasSubstr("member edge_feat.npy index [3, 1]"),
                                         HasSubstr("out of float32 range")));
  files["raw/data.npz/edge_feat.npy"] = test::npy_bytes<float>("<f4", "(5, 0)", {});
  EXPECT_THAT(binary_error(files),
              HasSubstr("data.npz: member edge_feat.npy: dataset.features_from_edges: has rows of "
                        "0 columns"));
  files["raw/data.npz/edge_feat.npy"] =
      test::npy_bytes<float>("<f4", "(5, 1)", {3e38f, 3e38f, 0, 0, 0});
  EXPECT_THAT(binary_error(files),
              HasSubstr("data.npz: member edge_feat.npy: dataset.features_from_edges: node"));
}

// ogbn-proteins' layout read without the key: the error says which key reads it.
TEST(EdgeFeatureNodes, ADatasetOfEdgeFeaturesOnlyNamesTheKey) {
  TempDir tmp;
  test::write_ogb(tmp.str("csv"), csv_text());
  EXPECT_THAT(test::error_of<InputError>([&] { load_ogb(tmp.str("csv"), ""); }),
              AllOf(HasSubstr("node-feat.csv.gz: file not found"),
                    HasSubstr("set dataset.features_from_edges to mean or sum")));
  test::write_ogb_binary(tmp.str("bin"), binary_files(), true);
  EXPECT_THAT(test::error_of<InputError>([&] { load_ogb(tmp.str("bin"), ""); }),
              AllOf(HasSubstr("data.npz: member node_feat.npy: missing"),
                    HasSubstr("set dataset.features_from_edges to mean or sum")));
  test::write_files(tmp.str("numpy"), numpy_files());
  EXPECT_THAT(test::error_of<InputError>([&] { load_numpy(tmp.str("numpy")); }),
              AllOf(HasSubstr("feat.npy: file not found, and the dataset has edge_feat.npy"),
                    HasSubstr("set dataset.features_from_edges to mean or sum")));
}

TEST(EdgeFeatureNodes, OtherLayoutsRefuseIt) {
  TempDir tmp;
  DatasetSpec spec;
  spec.features_from_edges = FeaturesFromEdges::kSum;
  EXPECT_THAT(test::error_of<ConfigError>([&] { load_dataset(spec); }),
              AllOf(HasSubstr("dataset.features_from_edges = sum reads the OGB layouts' edge "
                              "features"),
                    HasSubstr("the dataset's format is synthetic")));
  test::write_ogb(tmp.str("mag"), test::tiny_hetero_text());
  save_numpy(load_ogb(tmp.str("mag"), ""), tmp.str("typed"));
  EXPECT_THAT(test::error_of<ConfigError>(
                  [&] { load_numpy(tmp.str("typed"), how(FeaturesFromEdges::kMean, false)); }),
              HasSubstr("is a typed NumPy dataset (node_types.json), whose edges are relations'"));
  test::write_ogb(tmp.str("hetero"), test::tiny_hetero_text());
  EXPECT_THAT(test::error_of<ConfigError>(
                  [&] { load_ogb(tmp.str("hetero"), "", how(FeaturesFromEdges::kMean, false)); }),
              HasSubstr("OGB's heterogeneous layout"));
}

}  // namespace
}  // namespace adaqp
