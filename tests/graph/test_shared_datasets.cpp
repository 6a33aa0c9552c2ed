// The loaders on the real shared datasets: every count and the exact figures stated in
// ../shared/datasets/README.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "adaqp/graph/dataset.h"
#include "test_util.h"

namespace adaqp {
namespace {

using ::testing::ElementsAreArray;

struct Expected {
  int64_t nodes, edges, features, classes, train, valid, test;
  std::vector<int64_t> class_sizes;
  int64_t feature_nnz;
  int64_t self_loops;
};

std::vector<int64_t> class_histogram(const Graph& g) {
  std::vector<int64_t> sizes(g.num_classes, 0);
  for (int64_t label : g.labels) ++sizes[label];
  return sizes;
}

int64_t count_self_loops(const Graph& g) {
  int64_t loops = 0;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) loops += g.indices[e] == v;
  }
  return loops;
}

int64_t count_nonzeros(const std::vector<float>& values) {
  return std::count_if(values.begin(), values.end(), [](float x) { return x != 0.0f; });
}

void expect_counts(const Graph& g, const Expected& x) {
  EXPECT_EQ(g.num_nodes, x.nodes);
  EXPECT_EQ(g.num_edges(), x.edges);
  EXPECT_EQ(g.feat_dim, x.features);
  EXPECT_FALSE(g.multilabel);
  EXPECT_EQ(g.num_classes, x.classes);
  EXPECT_EQ(static_cast<int64_t>(g.train.size()), x.train);
  EXPECT_EQ(static_cast<int64_t>(g.valid.size()), x.valid);
  EXPECT_EQ(static_cast<int64_t>(g.test.size()), x.test);
  EXPECT_THAT(class_histogram(g), ElementsAreArray(x.class_sizes));
  EXPECT_EQ(count_nonzeros(g.features), x.feature_nnz);
  EXPECT_EQ(count_self_loops(g), x.self_loops);
  g.validate(g.name);
}

TEST(SharedDatasets, Cora) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "cora");
  Graph g = load_ogb(dir, "");
  EXPECT_EQ(g.name, "cora");
  expect_counts(
      g, {2708, 10556, 1433, 7, 140, 500, 1000, {351, 217, 418, 818, 426, 298, 180}, 49216, 0});
  // Public split: train is nodes 0..139, valid nodes 140..639.
  EXPECT_EQ(g.train.front(), 0);
  EXPECT_EQ(g.train.back(), 139);
  EXPECT_EQ(g.valid.front(), 140);
  EXPECT_EQ(g.valid.back(), 639);
  // Binary bag-of-words: every non-zero is exactly 1.
  EXPECT_EQ(std::count(g.features.begin(), g.features.end(), 1.0f), 49216);
  // The source lists both directions, so symmetrizing changes nothing.
  const std::vector<int64_t> indices = g.indices;
  apply_transform(g, {true, false, false});
  EXPECT_EQ(g.indices, indices);
}

TEST(SharedDatasets, CiteSeer) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "citeseer");
  Graph g = load_ogb(dir, "public");
  expect_counts(g,
                {3327, 9228, 3703, 6, 120, 500, 1000, {264, 590, 668, 701, 596, 508}, 105165, 124});
  apply_transform(g, {false, true, false});
  EXPECT_EQ(g.num_edges(), 9104 + 3327);
  EXPECT_EQ(count_self_loops(g), 3327);
}

TEST(SharedDatasets, AmazonPhoto) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "amazon-photo");
  Graph g = load_ogb(dir, "");
  expect_counts(g, {7650,
                    143663,
                    745,
                    8,
                    4591,
                    1530,
                    1529,
                    {369, 1686, 703, 915, 882, 823, 1941, 331},
                    1979909,
                    1});
  apply_transform(g, {true, false, false});
  // Symmetrized without the self-loop on node 1346: PyG's 238162 directed edges.
  EXPECT_EQ(count_self_loops(g), 1);
  const auto row = g.indices.begin();
  EXPECT_EQ(std::count(row + g.indptr[1346], row + g.indptr[1347], 1346), 1);
  EXPECT_EQ(g.num_edges() - count_self_loops(g), 238162);
  g.validate(g.name);
}

TEST(SharedDatasets, CoauthorPhysics) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "coauthor-physics");
  DatasetSpec spec;
  spec.path = dir;
  spec.transform.symmetrize = true;
  const Graph g = load_dataset(spec);
  // Symmetric in the source: symmetrizing keeps all 495924 edges.
  expect_counts(
      g, {34493, 495924, 8415, 5, 20696, 6899, 6898, {5750, 5045, 17426, 2753, 3519}, 1137311, 0});
  EXPECT_EQ(*std::max_element(g.features.begin(), g.features.end()), 98.0f);
  EXPECT_EQ(*std::min_element(g.features.begin(), g.features.end()), 0.0f);
}

TEST(SharedDatasets, CoraSurvivesNumpyRoundTrip) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "cora");
  const Graph g = load_ogb(dir, "");
  test::TempDir tmp;
  save_numpy(g, tmp.str("cora"));
  DatasetSpec spec;
  spec.path = tmp.str("cora");
  const Graph back = load_dataset(spec);
  EXPECT_EQ(back.name, "cora");
  EXPECT_EQ(fingerprint(back), fingerprint(g));
}

}  // namespace
}  // namespace adaqp
