// The NumPy layout: one .npy file per array, as exported from PyG or DGL.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "class_ids.h"
#include "npy.h"
#include "numpy_layout.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

std::string range(int64_t n) {
  return " is out of range [0, " + std::to_string(n) + ")";
}

void read_features(const std::string& path, Graph& g) {
  const NpyArray a = read_npy(path);
  check_feature_layout(path, a);
  g.num_nodes = a.shape[0];
  g.feat_dim = a.shape[1];
  g.features.resize(a.size());
  std::memcpy(g.features.data(), a.payload.data(), a.payload.size());
  for (size_t i = 0; i < g.features.size(); ++i) {
    if (!std::isfinite(g.features[i]))
      throw InputError(path, index2(i / g.feat_dim, i % g.feat_dim),
                       fmt::format("value {} is not finite", g.features[i]));
  }
}

void read_edges(const std::string& path, Graph& g) {
  const NpyArray a = read_npy(path);
  check_edge_layout(path, a);
  const int64_t num_edges = a.shape[1];
  const std::vector<int64_t> ids = npy_to_int64(a);
  for (int64_t i = 0; i < 2 * num_edges; ++i) {
    if (ids[i] < 0 || ids[i] >= g.num_nodes)
      throw InputError(
          path, index2(i / num_edges, i % num_edges),
          "node id " + std::to_string(ids[i]) + range(g.num_nodes) + " (N from feat.npy)");
  }
  const std::vector<int64_t> src(ids.begin(), ids.begin() + num_edges);
  const std::vector<int64_t> dst(ids.begin() + num_edges, ids.end());
  Graph structure = Graph::from_edges(g.num_nodes, src, dst);
  g.indptr = std::move(structure.indptr);
  g.indices = std::move(structure.indices);
}

void read_labels(const std::string& path, Graph& g) {
  const NpyArray a = read_npy(path);
  const int64_t n = g.num_nodes;
  if (labels_are_class_ids(path, a, n)) {
    g.labels = npy_to_int64(a);
    int64_t max_label = -1;
    for (int64_t v = 0; v < n; ++v) {
      const std::string problem = class_id_problem(g.labels[v], n);
      if (!problem.empty()) throw InputError(path, index1(v), problem);
      max_label = std::max(max_label, g.labels[v]);
    }
    g.num_classes = max_label + 1;
    return;
  }
  g.multilabel = true;
  g.num_classes = a.shape[1];
  g.multilabels.resize(a.size());
  for (int64_t i = 0; i < a.size(); ++i) {
    const double value = a.dtype == NpyDtype::kFloat32 ? npy_element<float>(a, i) : a.payload[i];
    const std::string problem = multilabel_problem(value);
    if (!problem.empty())
      throw InputError(path, index2(i / g.num_classes, i % g.num_classes), problem);
    g.multilabels[i] = static_cast<uint8_t>(value);
  }
}

// Node ids of one split from an index array or a bool mask; `owner` records earlier splits.
std::vector<int64_t> read_split(const std::string& path, int64_t n, std::vector<char>& owner,
                                char tag, const std::vector<std::string>& names) {
  const NpyArray a = read_npy(path);
  std::vector<int64_t> ids;
  if (split_is_mask(path, a, n)) {
    for (int64_t v = 0; v < n; ++v) {
      if (a.payload[v] > 1)
        throw InputError(path, index1(v),
                         "mask byte " + std::to_string(a.payload[v]) + " is not 0 or 1");
      if (a.payload[v] == 1) ids.push_back(v);
    }
  } else {
    ids = npy_to_int64(a);
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t v = ids[i];
    const std::string where = index1(a.dtype == NpyDtype::kBool ? v : static_cast<int64_t>(i));
    if (v < 0 || v >= n) throw InputError(path, where, "node id " + std::to_string(v) + range(n));
    if (owner[v] == tag)
      throw InputError(path, where, "node id " + std::to_string(v) + " is listed twice");
    if (owner[v] != 0)
      throw InputError(path, where,
                       "node id " + std::to_string(v) + " is also in " + names[owner[v] - 1] +
                           " (splits must be disjoint)");
    owner[v] = tag;
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

void write_graph_files(const Graph& g, const fs::path& dir) {
  const auto file = [&dir](const char* name) { return (dir / name).string(); };
  const int64_t e = g.num_edges();
  std::vector<int64_t> edge_index(2 * e);
  std::copy(g.indices.begin(), g.indices.end(), edge_index.begin());
  for (int64_t v = 0; v < g.num_nodes; ++v)
    std::fill(edge_index.begin() + e + g.indptr[v], edge_index.begin() + e + g.indptr[v + 1], v);
  write_npy(file("edge_index.npy"), NpyDtype::kInt64, {2, e}, edge_index.data(),
            edge_index.size() * sizeof(int64_t));
  write_npy(file("feat.npy"), NpyDtype::kFloat32, {g.num_nodes, g.feat_dim}, g.features.data(),
            g.features.size() * sizeof(float));
  if (g.multilabel)
    write_npy(file("label.npy"), NpyDtype::kUInt8, {g.num_nodes, g.num_classes},
              g.multilabels.data(), g.multilabels.size());
  else
    write_npy(file("label.npy"), NpyDtype::kInt64, {g.num_nodes}, g.labels.data(),
              g.labels.size() * sizeof(int64_t));
  for (const auto& [name, ids] : {std::pair{"train.npy", &g.train},
                                  std::pair{"valid.npy", &g.valid}, std::pair{"test.npy", &g.test}})
    write_npy(file(name), NpyDtype::kInt64, {static_cast<int64_t>(ids->size())}, ids->data(),
              ids->size() * sizeof(int64_t));
}

}  // namespace

Graph load_numpy(const std::string& dir) {
  const fs::path root(dir);
  const auto file = [&root](const std::string& name) { return (root / name).string(); };
  Graph g;
  const fs::path normal = root.lexically_normal();
  g.name =
      normal.has_filename() ? normal.filename().string() : normal.parent_path().filename().string();
  read_features(file("feat.npy"), g);
  read_edges(file("edge_index.npy"), g);
  read_labels(file("label.npy"), g);
  const std::vector<std::string> names = {"train.npy", "valid.npy", "test.npy"};
  std::vector<char> owner(g.num_nodes, 0);
  g.train = read_split(file(names[0]), g.num_nodes, owner, 1, names);
  g.valid = read_split(file(names[1]), g.num_nodes, owner, 2, names);
  g.test = read_split(file(names[2]), g.num_nodes, owner, 3, names);
  return g;
}

void save_numpy(const Graph& g, const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)))
    throw InputError(dir, "", "already exists; refusing to overwrite it");
  g.validate(g.name);
  const std::string tmp = dir + ".tmp-" + std::to_string(::getpid());
  if (!fs::create_directory(tmp, ec))
    throw InputError(tmp, "",
                     "cannot create the temporary directory" +
                         (ec ? ": " + ec.message() : ": it already exists"));
  try {
    write_graph_files(g, tmp);
    fs::rename(tmp, dir, ec);
    if (ec) throw InputError(dir, "", "cannot rename " + tmp + " into place: " + ec.message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace adaqp
