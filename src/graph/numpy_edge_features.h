// dataset.features_from_edges in the NumPy layout, shared by the whole-graph loader
// (numpy_loader.cpp) and the slice reader (slice_loader.cpp): edge_feat.npy (float32 [E, F], row e
// the features of edge_index.npy's column e, as PyG's data.edge_attr) reduced onto the nodes
// instead of reading feat.npy, and N then taken from label.npy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"

namespace adaqp {

constexpr char kEdgeFeatNpy[] = "edge_feat.npy";

// The file N is taken from: label.npy where the features come from the edges, feat.npy otherwise.
const char* numpy_nodes_file(const EdgeFeatureNodes& how);

// N of a dataset whose features come from its edges: label.npy's rows (its layout is checked in
// full where the labels are read).
int64_t numpy_nodes_from_labels(const std::string& label_path);

// feat.npy's path; a dataset of edge features only (edge_feat.npy, no feat.npy) read without
// dataset.features_from_edges is an InputError naming the key.
std::string numpy_feature_file(const std::string& dir);

// edge_feat.npy's rows, streamed beside edge_index.npy's two rows a block at a time in file order
// (so every slice sums as the whole graph does), reduced onto the nodes of `keep` as `how` says
// (graph/dataset.h). Every value is checked finite; edge ids outside `keep` add nothing (their
// range is the edge readers' to check). Sets feat_dim and features (keep.count x F).
void read_numpy_edge_feature_nodes(const std::string& dir, NodeRange keep,
                                   const EdgeFeatureNodes& how, int64_t& feat_dim,
                                   std::vector<float>& features);

}  // namespace adaqp
