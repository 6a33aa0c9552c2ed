// The two OGB raw layouts (dataset.h): CSV (ogb_loader.cpp) and binary (ogb_binary_loader.cpp).
// load_ogb_slice picks the layout; the split folder is read alike for both.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "adaqp/graph/graph_slice.h"

namespace adaqp {

// raw/data.npz and raw/node-label.npz of `dir`: the nodes, edges, features and labels of rank
// `rank`'s slice among `world`. `unlabelled` gets one entry per slice row, 1 where the node's label
// is NaN (no split may name it); such a node holds class 0.
GraphSlice read_ogb_binary(const std::filesystem::path& dir, int rank, int world,
                           std::vector<char>& unlabelled);

}  // namespace adaqp
