// The NumPy layout: one .npy file per array, as exported from PyG or DGL.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "atomic_dir.h"
#include "class_ids.h"
#include "npy.h"
#include "numpy_layout.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

// Large arrays are read in blocks of this many elements: a whole-file read would hold the file's
// bytes beside what they become (and, for edge_index, its widened copy and both rows: 4.5 times
// the CSR at the peak).
constexpr int64_t kBlockElements = int64_t{1} << 22;

void read_features(const std::string& path, Graph& g) {
  const NpyHeader h = read_npy_header(path);
  check_feature_layout(path, h.array);
  g.num_nodes = h.array.shape[0];
  g.feat_dim = h.array.shape[1];
  g.features.resize(static_cast<size_t>(h.elements));
  for (int64_t first = 0; first < h.elements; first += kBlockElements) {
    const int64_t count = std::min(kBlockElements, h.elements - first);
    const std::vector<uint8_t> bytes = read_npy_range(path, h, first, count);
    std::memcpy(g.features.data() + first, bytes.data(), bytes.size());
    for (int64_t i = first; i < first + count; ++i) {
      if (!std::isfinite(g.features[i]))
        throw InputError(path, index2(i / g.feat_dim, i % g.feat_dim),
                         fmt::format("value {} is not finite", g.features[i]));
    }
  }
}

// The CSR by target straight from the file: the sources' row is read twice (checked, then
// placed), the targets' twice (checked and counted, then used to place), a block at a time.
void read_edges(const std::string& path, Graph& g) {
  const NpyHeader h = read_npy_header(path);
  check_edge_layout(path, h.array);
  const int64_t num_edges = h.array.shape[1];
  const auto for_blocks = [&](int64_t row, auto&& visit) {
    for (int64_t first = 0; first < num_edges; first += kBlockElements) {
      const int64_t count = std::min(kBlockElements, num_edges - first);
      visit(first,
            npy_to_int64(read_npy_range(path, h, row * num_edges + first, count), h.array.dtype));
    }
  };
  g.indptr.assign(static_cast<size_t>(g.num_nodes) + 1, 0);
  for (const int64_t row : {0, 1}) {
    for_blocks(row, [&](int64_t first, const std::vector<int64_t>& ids) {
      for (size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= g.num_nodes)
          throw InputError(path, index2(row, first + static_cast<int64_t>(i)),
                           "node id " + std::to_string(ids[i]) + out_of_range(g.num_nodes) +
                               " (N from feat.npy)");
        if (row == 1) ++g.indptr[ids[i] + 1];
      }
    });
  }
  for (int64_t v = 0; v < g.num_nodes; ++v) g.indptr[v + 1] += g.indptr[v];
  g.indices.resize(static_cast<size_t>(num_edges));
  std::vector<int64_t> cursor(g.indptr.begin(), g.indptr.end() - 1);
  for_blocks(1, [&](int64_t first, const std::vector<int64_t>& dst) {
    const std::vector<int64_t> sources = npy_to_int64(
        read_npy_range(path, h, first, static_cast<int64_t>(dst.size())), h.array.dtype);
    for (size_t i = 0; i < dst.size(); ++i) g.indices[cursor[dst[i]]++] = sources[i];
  });
  for (int64_t v = 0; v < g.num_nodes; ++v)
    std::sort(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]);
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
    if (v < 0 || v >= n)
      throw InputError(path, where, "node id " + std::to_string(v) + out_of_range(n));
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
  if (g.heterogeneous())
    throw InputError(dir, "",
                     g.name +
                         " is heterogeneous, and the NumPy layout has no types: write it with "
                         "save_ogb_hetero");
  g.validate(g.name);
  write_dir_atomically(dir, [&](const std::string& tmp) { write_graph_files(g, tmp); });
}

}  // namespace adaqp
