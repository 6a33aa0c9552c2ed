// The NumPy layout: one .npy file per array, as exported from PyG or DGL.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/npy.h"
#include "atomic_dir.h"
#include "class_ids.h"
#include "numpy_edge_features.h"
#include "numpy_layout.h"
#include "split_checks.h"
#include "strict_json.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

void read_features(const std::string& path, Graph& g) {
  const NpyHeader h = read_npy_header(path);
  check_feature_layout(path, h.array);
  g.num_nodes = h.array.shape[0];
  g.feat_dim = h.array.shape[1];
  g.features.resize(static_cast<size_t>(h.elements));
  for (int64_t first = 0; first < h.elements; first += kNpyBlockElements) {
    const int64_t count = std::min(kNpyBlockElements, h.elements - first);
    const std::vector<uint8_t> bytes = read_npy_range(path, h, first, count);
    std::memcpy(g.features.data() + first, bytes.data(), bytes.size());
    for (int64_t i = first; i < first + count; ++i) {
      if (!std::isfinite(g.features[i]))
        throw InputError(path, index2(i / g.feat_dim, i % g.feat_dim),
                         fmt::format("value {} is not finite", g.features[i]));
    }
  }
}

// A typed dataset's names (node_types.json: {"node_types": [...], "relations": [[source type, name,
// target type], ...]}) and type ranges (node_type_offsets.npy: int [T + 1], from 0 to N).
void read_types(const fs::path& root, Graph& g) {
  const std::string path = (root / kNodeTypesJson).string();
  const nlohmann::json doc = parse_strict_json(path);
  const auto strings = [&](const nlohmann::json& list, const std::string& key) {
    if (!list.is_array()) throw InputError(path, key, "must be a list of names");
    std::vector<std::string> out;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string() || list[i].get<std::string>().empty())
        throw InputError(path, key + "[" + std::to_string(i) + "]", "must be a non-empty name");
      out.push_back(list[i].get<std::string>());
    }
    return out;
  };
  if (!doc.is_object() || !doc.contains("node_types") || !doc.contains("relations"))
    throw InputError(path, "", "must be an object with node_types and relations");
  g.node_types = strings(doc["node_types"], "node_types");
  if (g.node_types.empty()) throw InputError(path, "node_types", "lists no node type");
  if (!doc["relations"].is_array() || doc["relations"].empty())
    throw InputError(path, "relations", "must be a non-empty list");
  for (size_t r = 0; r < doc["relations"].size(); ++r) {
    const std::string key = "relations[" + std::to_string(r) + "]";
    const std::vector<std::string> t = strings(doc["relations"][r], key);
    if (t.size() != 3) throw InputError(path, key, "must be [source type, name, target type]");
    Relation rel{-1, t[1], -1};
    for (size_t k = 0; k < g.node_types.size(); ++k) {
      if (g.node_types[k] == t[0]) rel.src_type = static_cast<int32_t>(k);
      if (g.node_types[k] == t[2]) rel.dst_type = static_cast<int32_t>(k);
    }
    if (rel.src_type < 0 || rel.dst_type < 0)
      throw InputError(path, key,
                       "names node type '" + (rel.src_type < 0 ? t[0] : t[2]) +
                           "', which node_types does not list");
    g.relations.push_back(rel);
  }
  const std::string offsets_path = (root / "node_type_offsets.npy").string();
  const NpyArray a = read_npy(offsets_path);
  const auto types = static_cast<int64_t>(g.node_types.size());
  if (!npy_is_int(a) || a.shape.size() != 1 || a.shape[0] != types + 1)
    bad_layout(offsets_path, a,
               fmt::format("int32 or int64 [{}] (T + 1, T from {})", types + 1, kNodeTypesJson));
  g.type_offsets = npy_to_int64(a);
  for (int64_t t = 0; t <= types; ++t) {
    const int64_t want_first = t == 0 ? 0 : g.type_offsets[t - 1];
    if ((t == 0 && g.type_offsets[0] != 0) || g.type_offsets[t] < want_first ||
        (t == types && g.type_offsets[t] != g.num_nodes))
      throw InputError(offsets_path, index1(t),
                       fmt::format("value {}: the offsets must ascend from 0 to N = {} (from "
                                   "feat.npy)",
                                   g.type_offsets[t], g.num_nodes));
  }
}

// The CSR by target straight from the file: the sources' row is read twice (checked, then
// placed), the targets' twice (checked and counted, then used to place), a block at a time. A
// typed dataset's edge_type.npy (int [E], a relation id per column of edge_index) is read beside
// the placement, each edge checked against its relation's types.
void read_edges(const std::string& path, const std::string& types_path, const char* nodes_file,
                Graph& g) {
  const NpyHeader h = read_npy_header(path);
  check_edge_layout(path, h.array);
  const int64_t num_edges = h.array.shape[1];
  const auto for_blocks = [&](int64_t row, auto&& visit) {
    for (int64_t first = 0; first < num_edges; first += kNpyBlockElements) {
      const int64_t count = std::min(kNpyBlockElements, num_edges - first);
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
                               " (N from " + nodes_file + ")");
        if (row == 1) ++g.indptr[ids[i] + 1];
      }
    });
  }
  for (int64_t v = 0; v < g.num_nodes; ++v) g.indptr[v + 1] += g.indptr[v];
  g.indices.resize(static_cast<size_t>(num_edges));
  const bool typed = !types_path.empty();
  NpyHeader th;
  if (typed) {
    th = read_npy_header(types_path);
    if (!npy_is_int(th.array) || th.array.shape.size() != 1 || th.array.shape[0] != num_edges)
      bad_layout(types_path, th.array,
                 fmt::format("int32 or int64 [{}] (E, from edge_index.npy)", num_edges));
    g.edge_relation.resize(static_cast<size_t>(num_edges));
  }
  std::vector<int64_t> cursor(g.indptr.begin(), g.indptr.end() - 1);
  for_blocks(1, [&](int64_t first, const std::vector<int64_t>& dst) {
    const auto count = static_cast<int64_t>(dst.size());
    const std::vector<int64_t> sources =
        npy_to_int64(read_npy_range(path, h, first, count), h.array.dtype);
    std::vector<int64_t> rel;
    if (typed) rel = npy_to_int64(read_npy_range(types_path, th, first, count), th.array.dtype);
    for (size_t i = 0; i < dst.size(); ++i) {
      const int64_t e = cursor[dst[i]]++;
      g.indices[e] = sources[i];
      if (!typed) continue;
      const int64_t r = rel[i];
      const std::string where = index1(first + static_cast<int64_t>(i));
      if (r < 0 || r >= static_cast<int64_t>(g.relations.size()))
        throw InputError(types_path, where,
                         "relation " + std::to_string(r) +
                             out_of_range(static_cast<int64_t>(g.relations.size())) +
                             " (the relations of " + kNodeTypesJson + ")");
      const Relation& to = g.relations[r];
      const int32_t from_type = g.node_type(sources[i]), to_type = g.node_type(dst[i]);
      if (from_type != to.src_type || to_type != to.dst_type)
        throw InputError(
            types_path, where,
            fmt::format("edge {} -> {} joins types '{}' and '{}', but relation {} "
                        "('{}') joins '{}' and '{}'",
                        sources[i], dst[i], g.node_types[from_type], g.node_types[to_type], r,
                        to.name, g.node_types[to.src_type], g.node_types[to.dst_type]));
      g.edge_relation[e] = static_cast<int32_t>(r);
    }
  });
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    if (!typed) {
      std::sort(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]);
      continue;
    }
    std::vector<std::pair<int64_t, int32_t>> row;
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
      row.emplace_back(g.indices[e], g.edge_relation[e]);
    std::sort(row.begin(), row.end());
    for (size_t k = 0; k < row.size(); ++k) {
      g.indices[g.indptr[v] + static_cast<int64_t>(k)] = row[k].first;
      g.edge_relation[g.indptr[v] + static_cast<int64_t>(k)] = row[k].second;
    }
  }
}

void read_labels(const std::string& path, const char* nodes_file, Graph& g) {
  const NpyArray a = read_npy(path);
  const int64_t n = g.num_nodes;
  if (labels_are_class_ids(path, a, n, nodes_file)) {
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
    const double value = multilabel_value(a.payload.data(), a.dtype, i);
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
    if (v < 0 || v >= n) throw InputError(path, where, node_out_of_range(v, n));
    claim_split_node(owner[v], tag, v, names, path, where);
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
  if (!g.heterogeneous()) return;
  nlohmann::json doc;
  doc["node_types"] = g.node_types;
  doc["relations"] = nlohmann::json::array();
  for (const Relation& r : g.relations) {
    doc["relations"].push_back({g.node_types[r.src_type], r.name, g.node_types[r.dst_type]});
  }
  std::ofstream(file(kNodeTypesJson)) << doc.dump(1) << "\n";
  write_npy(file("node_type_offsets.npy"), NpyDtype::kInt64,
            {static_cast<int64_t>(g.type_offsets.size())}, g.type_offsets.data(),
            g.type_offsets.size() * sizeof(int64_t));
  std::vector<int64_t> relation(g.edge_relation.begin(), g.edge_relation.end());
  write_npy(file("edge_type.npy"), NpyDtype::kInt64, {e}, relation.data(),
            relation.size() * sizeof(int64_t));
}

}  // namespace

Graph load_numpy(const std::string& dir, const EdgeFeatureNodes& from_edges) {
  const fs::path root(dir);
  const auto file = [&root](const std::string& name) { return (root / name).string(); };
  Graph g;
  g.name = directory_name(root);
  std::error_code ec;
  const bool typed = fs::exists(root / kNodeTypesJson, ec);
  const bool edge_rows = from_edges.reduce != FeaturesFromEdges::kNone;
  if (typed && edge_rows)
    throw ConfigError(fmt::format(
        "dataset.features_from_edges = {}: {} is a typed NumPy dataset ({}), whose edges are "
        "relations' and carry no {}; use none",
        to_string(from_edges.reduce), dir, kNodeTypesJson, kEdgeFeatNpy));
  if (edge_rows)
    g.num_nodes = numpy_nodes_from_labels(file("label.npy"));
  else
    read_features(numpy_feature_file(dir), g);
  if (typed) read_types(root, g);
  const char* nodes_file = numpy_nodes_file(from_edges);
  read_edges(file("edge_index.npy"), typed ? file("edge_type.npy") : "", nodes_file, g);
  if (edge_rows)
    read_numpy_edge_feature_nodes(dir, NodeRange{0, g.num_nodes}, from_edges, g.feat_dim,
                                  g.features);
  read_labels(file("label.npy"), nodes_file, g);
  const std::vector<std::string> names = {"train.npy", "valid.npy", "test.npy"};
  std::vector<char> owner(g.num_nodes, 0);
  g.train = read_split(file(names[0]), g.num_nodes, owner, 1, names);
  g.valid = read_split(file(names[1]), g.num_nodes, owner, 2, names);
  g.test = read_split(file(names[2]), g.num_nodes, owner, 3, names);
  return g;
}

void save_numpy(const Graph& g, const std::string& dir) {
  g.validate(g.name);
  write_dir_atomically(dir, [&](const std::string& tmp) { write_graph_files(g, tmp); });
}

}  // namespace adaqp
