#include "adaqp/graph/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 4 nodes, edges 0->1, 1->2, 2->3, 3->0, 1->0 (CSR indptr [0 2 3 4 5], indices [1 3 0 1 2]).
Graph tiny_graph() {
  Graph g = Graph::from_edges(4, {0, 1, 2, 3, 1}, {1, 2, 3, 0, 0});
  g.name = "tiny";
  g.feat_dim = 3;
  g.features = {1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0};
  g.num_classes = 3;
  g.labels = {0, 1, 2, 1};
  g.train = {0, 1};
  g.valid = {2};
  g.test = {3};
  return g;
}

std::string validate_message(const Graph& g) {
  try {
    g.validate("origin-name");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(GraphFromEdges, BuildsSortedCsrByDestination) {
  const Graph g = Graph::from_edges(4, {3, 0, 2, 1, 0, 3}, {0, 1, 1, 1, 0, 0});
  EXPECT_EQ(g.num_nodes, 4);
  EXPECT_THAT(g.indptr, ElementsAre(0, 3, 6, 6, 6));
  EXPECT_THAT(g.indices, ElementsAre(0, 3, 3, 0, 1, 2));
  EXPECT_EQ(g.in_degree(0), 3);
  EXPECT_EQ(g.in_degree(2), 0);
  EXPECT_THAT(g.out_degrees(), ElementsAre(2, 1, 1, 2));
}

// model.featureless: embedding learns the rows of a type with nodes and zero features only; a
// type of no nodes has nothing to learn (it had switched the embedding on with no rows).
TEST(GraphFeatureless, ATypeWithNodesAndZeroRowsOnly) {
  Graph g = Graph::from_edges(4, {0}, {1});
  g.feat_dim = 1;
  g.features = {1, 2, 3, 4};
  EXPECT_FALSE(g.has_featureless_type());
  g.node_types = {"a", "b", "none"};
  g.type_offsets = {0, 2, 4, 4};
  EXPECT_FALSE(g.has_featureless_type());
  g.features = {1, 2, 0, 0};
  EXPECT_TRUE(g.has_featureless_type());
  g.features = {0, 0, 0, 0};
  g.node_types.clear();
  g.type_offsets.clear();
  EXPECT_TRUE(g.has_featureless_type());  // a homogeneous graph's one type
}

TEST(GraphFromEdges, EmptyGraphHasZeroRows) {
  const Graph g = Graph::from_edges(3, {}, {});
  EXPECT_THAT(g.indptr, ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(g.num_edges(), 0);
}

TEST(GraphFromEdges, RejectsIdsOutOfRange) {
  EXPECT_THROW(Graph::from_edges(3, {0, 3}, {1, 1}), InvariantError);
  EXPECT_THROW(Graph::from_edges(3, {0}, {-1}), InvariantError);
  EXPECT_THROW(Graph::from_edges(3, {0, 1}, {1}), InvariantError);
}

TEST(GraphValidate, AcceptsConsistentGraph) {
  EXPECT_EQ(validate_message(tiny_graph()), "no error");
}

TEST(GraphValidate, NamesEachBrokenInvariant) {
  Graph unsorted = tiny_graph();
  std::swap(unsorted.indices[0], unsorted.indices[1]);
  EXPECT_THAT(validate_message(unsorted), HasSubstr("origin-name: edge index 1: sources of node 0 "
                                                    "are not sorted (1 after 3)"));

  Graph bad_source = tiny_graph();
  bad_source.indices[2] = 9;
  EXPECT_THAT(validate_message(bad_source), HasSubstr("edge index 2: source node id 9"));

  Graph nan_feature = tiny_graph();
  nan_feature.features[4] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(validate_message(nan_feature),
              HasSubstr("node 1 feature 1: value nan is not finite"));

  Graph bad_label = tiny_graph();
  bad_label.labels[3] = 3;
  EXPECT_THAT(validate_message(bad_label), HasSubstr("node 3: label 3 is out of range [0, 3)"));
  EXPECT_THAT(validate_message(bad_label), HasSubstr("of the 3 classes"));
  bad_label.labels[3] = -1;
  EXPECT_THAT(validate_message(bad_label), HasSubstr("node 3: label -1 is negative"));

  Graph overlap = tiny_graph();
  overlap.test = {1};
  EXPECT_THAT(validate_message(overlap),
              HasSubstr("test index 0: node id 1 is in two splits (test and train)"));

  Graph unordered_split = tiny_graph();
  unordered_split.train = {1, 0};
  EXPECT_THAT(validate_message(unordered_split), HasSubstr("train index 1: node id 0"));

  Graph short_features = tiny_graph();
  short_features.features.pop_back();
  EXPECT_THAT(validate_message(short_features),
              HasSubstr("features: has 11 values, expected 4 x 3"));

  Graph bad_multilabel = tiny_graph();
  bad_multilabel.labels.clear();
  bad_multilabel.multilabel = true;
  bad_multilabel.multilabels = {1, 0, 0, 0, 1, 0, 0, 2, 0, 1, 1, 1};
  EXPECT_THAT(validate_message(bad_multilabel), HasSubstr("node 2 class 1: multi-label value 2"));
}

TEST(GraphTransform, SymmetrizeAddsReverseEdgesAndDropsDuplicates) {
  Graph g = Graph::from_edges(3, {0, 0, 1, 2, 2}, {1, 1, 0, 2, 0});
  apply_transform(g, {true, false, false});
  // Undirected pairs {0,1}, {0,2} and the self-loop on 2, each listed once per direction.
  EXPECT_THAT(g.indptr, ElementsAre(0, 2, 3, 5));
  EXPECT_THAT(g.indices, ElementsAre(1, 2, 0, 0, 2));
}

TEST(GraphTransform, SelfLoopsReplacesExistingOnes) {
  Graph g = Graph::from_edges(3, {2, 1, 1, 0, 2}, {0, 1, 1, 2, 2});
  apply_transform(g, {false, true, false});
  EXPECT_THAT(g.indptr, ElementsAre(0, 2, 3, 5));
  EXPECT_THAT(g.indices, ElementsAre(0, 2, 1, 0, 2));
}

TEST(GraphTransform, RowNormalizeKeepsZeroRows) {
  Graph g = tiny_graph();
  apply_transform(g, {false, false, true});
  // Row 1, (0.5, -1.25, 0), is signed: divided by its absolute sum 1.75, not by its sum -0.75.
  EXPECT_THAT(g.features, ElementsAre(1.0f / 3, 0, 2.0f / 3, 0.5f / 1.75f, -1.25f / 1.75f, 0,
                                      1.0f / 3, 1.0f / 3, 1.0f / 3, 0, 0, 0));
}

TEST(GraphTransform, AppliesAllInOrder) {
  Graph g = tiny_graph();
  apply_transform(g, {true, true, false});
  // Undirected: 0-1, 1-2, 2-3, 3-0, plus one self-loop each.
  EXPECT_THAT(g.indptr, ElementsAre(0, 3, 6, 9, 12));
  EXPECT_THAT(g.indices, ElementsAre(0, 1, 3, 0, 1, 2, 1, 2, 3, 0, 2, 3));
  EXPECT_EQ(validate_message(g), "no error");
}

TEST(GraphFingerprint, IsStableAcrossCopiesAndRuns) {
  const Graph a = tiny_graph();
  Graph b = tiny_graph();
  b.name = "another name";
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  EXPECT_EQ(fingerprint(a).size(), 32u);
  // Pinned value (computed independently with Python zlib.crc32 over the same little-endian
  // bytes): the hash must not drift between builds or machines.
  EXPECT_EQ(fingerprint(a), "9adfc6a064481baa4fedf88c4fa04f77");
}

TEST(GraphFingerprint, ChangesWithEveryPart) {
  const Graph base = tiny_graph();
  const std::string f = fingerprint(base);

  Graph edge = base;
  edge.indices[0] = 2;
  Graph feature = base;
  feature.features[7] = 3.5f;
  Graph label = base;
  label.labels[0] = 2;
  Graph split = base;
  split.test.clear();
  Graph moved = base;  // same ids, different split membership
  moved.valid = {3};
  moved.test = {2};
  for (const Graph* changed : {&edge, &feature, &label, &split, &moved})
    EXPECT_NE(fingerprint(*changed), f);
  // Each part has its own 8 hex digits: an edge change leaves the other parts' digits alone.
  EXPECT_NE(fingerprint(edge).substr(0, 8), f.substr(0, 8));
  EXPECT_EQ(fingerprint(edge).substr(8), f.substr(8));
  EXPECT_EQ(fingerprint(feature).substr(0, 8), f.substr(0, 8));
}

}  // namespace
}  // namespace adaqp
