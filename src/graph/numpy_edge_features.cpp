#include "numpy_edge_features.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "adaqp/common/error.h"
#include "adaqp/graph/npy.h"
#include "edge_feature_sums.h"
#include "numpy_layout.h"

namespace adaqp {
namespace fs = std::filesystem;

const char* numpy_nodes_file(const EdgeFeatureNodes& how) {
  return how.reduce == FeaturesFromEdges::kNone ? "feat.npy" : "label.npy";
}

int64_t numpy_nodes_from_labels(const std::string& label_path) {
  const NpyHeader h = read_npy_header(label_path);
  if (h.array.shape.empty() || h.array.shape.size() > 2)
    bad_layout(label_path, h.array,
               "int32/int64 [N] class ids or float32/uint8/bool/int [N, C] multi-label 0/1 "
               "values (N from label.npy: features from edge_feat.npy)");
  check_node_rows(label_path, h.array);
  return h.array.shape[0];
}

std::string numpy_feature_file(const std::string& dir) {
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::exists(root / "feat.npy", ec) && fs::exists(root / kEdgeFeatNpy, ec))
    throw InputError((root / "feat.npy").string(), "",
                     fmt::format("file not found, and the dataset has {} (edge features only, "
                                 "as PyG's ogbn-proteins): set dataset.features_from_edges to "
                                 "mean or sum to make node features from them",
                                 kEdgeFeatNpy));
  return (root / "feat.npy").string();
}

void read_numpy_edge_feature_nodes(const std::string& dir, NodeRange keep,
                                   const EdgeFeatureNodes& how, int64_t& feat_dim,
                                   std::vector<float>& features) {
  const std::string edge_path = (fs::path(dir) / "edge_index.npy").string();
  const std::string feat_path = (fs::path(dir) / kEdgeFeatNpy).string();
  std::error_code ec;
  if (!fs::exists(feat_path, ec))
    throw InputError(feat_path, "dataset.features_from_edges",
                     fmt::format("file not found: features_from_edges = {} makes node features "
                                 "from the edges' ({}, a row per column of edge_index.npy)",
                                 to_string(how.reduce), kEdgeFeatNpy));
  const NpyHeader eh = read_npy_header(edge_path);
  check_edge_layout(edge_path, eh.array);
  const int64_t num_edges = eh.array.shape[1];
  const NpyHeader fh = read_npy_header(feat_path);
  const NpyArray& a = fh.array;
  if (a.dtype != NpyDtype::kFloat32 || a.shape.size() != 2 || a.shape[0] != num_edges)
    bad_layout(
        feat_path, a,
        fmt::format("float32 (<f4) [{}, F]: a row per column of edge_index.npy{}", num_edges,
                    a.dtype != NpyDtype::kFloat32 ? " (convert with .astype(numpy.float32))" : ""));
  const int64_t dim = a.shape[1];
  EdgeFeatureSums sums(keep, how, feat_path);
  sums.start(dim);
  const int64_t piece = std::max<int64_t>(1, kNpyBlockElements / std::max<int64_t>(1, dim));
  std::vector<float> rows;
  for (int64_t first = 0; first < num_edges; first += piece) {
    const int64_t k = std::min(piece, num_edges - first);
    const std::vector<int64_t> src =
        npy_to_int64(read_npy_range(edge_path, eh, first, k), eh.array.dtype);
    const std::vector<int64_t> dst =
        npy_to_int64(read_npy_range(edge_path, eh, num_edges + first, k), eh.array.dtype);
    const std::vector<uint8_t> bytes = read_npy_range(feat_path, fh, first * dim, k * dim);
    rows.resize(static_cast<size_t>(k * dim));
    std::memcpy(rows.data(), bytes.data(), bytes.size());
    for (int64_t i = 0; i < k * dim; ++i) {
      if (!std::isfinite(rows[static_cast<size_t>(i)]))
        throw InputError(feat_path, index2(first + i / dim, i % dim),
                         fmt::format("value {} is not finite", rows[static_cast<size_t>(i)]));
    }
    for (int64_t e = 0; e < k; ++e) sums.add(src[e], dst[e], rows.data() + e * dim);
  }
  sums.finish(feat_dim, features);
}

}  // namespace adaqp
