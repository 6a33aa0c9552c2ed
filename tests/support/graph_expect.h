// Field-by-field comparisons of loaded graphs and graph slices, shared by the loader tests, so
// that a mismatch names the field that differs.
#pragma once

#include <gtest/gtest.h>

#include "adaqp/graph/graph.h"
#include "adaqp/graph/graph_slice.h"

namespace adaqp::test {

// The fields a Graph and a GraphSlice share.
template <class G>
void expect_same_rows(const G& got, const G& want) {
  EXPECT_EQ(got.num_nodes, want.num_nodes);
  EXPECT_EQ(got.indptr, want.indptr);
  EXPECT_EQ(got.indices, want.indices);
  EXPECT_EQ(got.feat_dim, want.feat_dim);
  EXPECT_EQ(got.features, want.features);
  EXPECT_EQ(got.num_classes, want.num_classes);
  EXPECT_EQ(got.multilabel, want.multilabel);
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.multilabels, want.multilabels);
  EXPECT_EQ(got.train, want.train);
  EXPECT_EQ(got.valid, want.valid);
  EXPECT_EQ(got.test, want.test);
}

inline void expect_same_slice(const GraphSlice& got, const GraphSlice& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.first, want.first);
  expect_same_rows(got, want);
}

inline void expect_same_graph(const Graph& got, const Graph& want) {
  expect_same_rows(got, want);
  EXPECT_EQ(fingerprint(got), fingerprint(want));
}

}  // namespace adaqp::test
