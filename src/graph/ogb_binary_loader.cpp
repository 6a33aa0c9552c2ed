// The OGB binary raw layout, as ogb.io.DatasetSaver writes it (numpy.savez_compressed: members
// deflated) and ogbn-papers100M ships it: raw/data.npz and raw/node-label.npz, members deflated or
// stored (numpy.savez). Each member is streamed in pieces; only the slice's rows and in-edges are
// held.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/npy.h"
#include "class_ids.h"
#include "edge_feature_sums.h"
#include "npz_reader.h"
#include "ogb_layout.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

constexpr char kDataNpzMembers[] =
    "the OGB binary layout's raw/data.npz (ogb.io.DatasetSaver) has edge_index.npy, node_feat.npy, "
    "num_nodes_list.npy and num_edges_list.npy";
// ogbn-proteins' layout, read without dataset.features_from_edges.
constexpr char kFeaturesOnEdges[] =
    "missing, and the dataset has edge features (ogbn-proteins' layout): set "
    "dataset.features_from_edges to mean or sum to make node features from them";
constexpr char kLabelNpzMembers[] =
    "the OGB binary layout's raw/node-label.npz (ogb.io.DatasetSaver) has node_label.npy";
// Members are streamed in pieces of this many elements: at most 128 KiB, glibc's first mmap
// threshold, so the pieces are reused from the heap. Pieces of 2 MiB, freed, raise the threshold
// and stay resident: 2.4 MiB more peak per rank than the CSV layout's at 1M nodes.
constexpr int64_t kNpzPiece = int64_t{1} << 14;
// Float class ids are exact integers below this (and int64 holds them).
constexpr double kMaxFloatClassId = 0x1p62;

bool is_float(NpyDtype d) {
  return d == NpyDtype::kFloat16 || d == NpyDtype::kFloat32 || d == NpyDtype::kFloat64;
}

// Element i of `bytes` (a piece of a member of dtype d, not kBytes) as a double; int64 values
// beyond 2^53 round, which only the range checks see.
double value_at(const std::vector<uint8_t>& bytes, size_t i, NpyDtype d) {
  switch (d) {
    case NpyDtype::kInt32: {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    case NpyDtype::kInt64: {
      int64_t v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      return static_cast<double>(v);
    }
    case NpyDtype::kFloat16: {
      uint16_t h;
      std::memcpy(&h, bytes.data() + 2 * i, 2);
      const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
      const double sign = (h & 0x8000) ? -1.0 : 1.0;
      if (exponent == 0x1f)
        return mantissa ? std::numeric_limits<double>::quiet_NaN()
                        : sign * std::numeric_limits<double>::infinity();
      if (exponent == 0) return sign * std::ldexp(mantissa, -24);  // zero or subnormal
      return sign * std::ldexp(mantissa + 1024, exponent - 25);
    }
    case NpyDtype::kFloat32: {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      return v;
    }
    case NpyDtype::kFloat64: {
      double v;
      std::memcpy(&v, bytes.data() + 8 * i, 8);
      return v;
    }
    case NpyDtype::kUInt8:
    case NpyDtype::kBool:
      return bytes[i];
    case NpyDtype::kBytes:
      break;
  }
  throw InvariantError("value_at: not a numeric dtype");
}

std::string at_index(const NpyArray& a, int64_t flat) {
  if (a.shape.size() != 2) return "index " + std::to_string(flat);
  return "index [" + std::to_string(flat / a.shape[1]) + ", " + std::to_string(flat % a.shape[1]) +
         "]";
}

// num_nodes_list / num_edges_list: int [1], a non-negative count (one graph).
int64_t read_list_count(const std::string& path, const NpzReader& npz, const std::string& name) {
  const NpyArray a = npz.member(name);
  if (!npy_is_int(a) || a.shape.size() != 1) bad_member(path, name, a, "int64 [1]");
  if (a.shape[0] != 1)
    throw InputError(path, "member " + name,
                     "has " + std::to_string(a.shape[0]) +
                         " entries, expected 1 (only single-graph datasets are supported)");
  const int64_t count = npy_to_int64(a)[0];
  if (count < 0)
    throw InputError(path, "member " + name + " index 0",
                     "count " + std::to_string(count) + " is negative");
  return count;
}

// A feature member (node_feat, edge_feat): float16/32/64 or int [rows, F] (DatasetSaver keeps
// integer features as int64), `rows` as the list member `count_member` says (`count` names it).
void check_feature_member(const std::string& path, const std::string& member, const NpyArray& a,
                          int64_t rows, const char* count, const char* count_member) {
  if (a.dtype == NpyDtype::kBytes || a.dtype == NpyDtype::kBool || a.dtype == NpyDtype::kUInt8 ||
      a.shape.size() != 2)
    bad_member(path, member, a, fmt::format("float16/32/64 or int32/64 [{}, F]", count));
  if (a.shape[0] != rows)
    throw InputError(
        path, "member " + member,
        fmt::format("has {} rows, expected {} = {} ({})", a.shape[0], count, rows, count_member));
}

// Element i of a piece of feature member `member` (a), the member's element `flat`, as float32;
// one that is not finite or beyond float32's range is noted in `bad`.
float feature_value(const std::vector<uint8_t>& bytes, int64_t i, const NpyArray& a,
                    const std::string& member, int64_t flat, FirstBadValue& bad) {
  const double value = value_at(bytes, static_cast<size_t>(i), a.dtype);
  if (std::fabs(value) <= std::numeric_limits<float>::max()) return static_cast<float>(value);
  bad.note("member " + member + " " + at_index(a, flat),
           fmt::format(
               std::isfinite(value) ? "value {} is out of float32 range" : "value {} is not finite",
               value));
  return 0.0f;
}

// node_feat, float16/32/64 or int [N, F] (DatasetSaver keeps integer features as int64): the
// slice's rows as float32, each value finite and within float32 range. A stored member is read
// from the slice's first row to its last; a deflated one is streamed whole, every row checked.
void read_binary_features(const std::string& path, const NpzReader& npz, NodeRange keep,
                          GraphSlice& s) {
  NpzMember m = npz.open("node_feat.npy");
  const NpyArray& a = m.array();
  check_feature_member(path, "node_feat.npy", a, s.num_nodes, "N", "num_nodes_list.npy");
  const int64_t dim = s.feat_dim = a.shape[1];
  const int64_t first = m.compressed() ? 0 : keep.first * dim;
  const int64_t end = m.compressed() ? m.elements() : (keep.first + keep.count) * dim;
  const int64_t kept_first = keep.first * dim, kept_end = kept_first + keep.count * dim;
  s.features.resize(static_cast<size_t>(keep.count * dim));
  m.skip(first);
  FirstBadValue bad(path);
  std::vector<uint8_t> bytes;
  for (int64_t at = first; at < end; at += kNpzPiece) {
    const int64_t k = std::min(kNpzPiece, end - at);
    m.read(k, bytes);
    for (int64_t i = 0; i < k; ++i) {
      const float value = feature_value(bytes, i, a, "node_feat.npy", at + i, bad);
      if (at + i >= kept_first && at + i < kept_end)
        s.features[static_cast<size_t>(at + i - kept_first)] = value;
    }
  }
  if (end == m.elements()) m.finish();
  bad.report();
}

// node_label: class ids [N] or [N, 1] (int, or float holding integers; NaN marks an unlabelled
// node, as in ogbn-papers100M), or multi-label 0/1 values [N, C] with C > 1. Streamed whole, every
// value checked; the slice's rows kept.
void read_binary_labels(const std::string& path, NodeRange keep, GraphSlice& s,
                        std::vector<char>& unlabelled) {
  const NpzReader npz(path, kLabelNpzMembers);
  NpzMember m = npz.open("node_label.npy");
  const NpyArray& a = m.array();
  const bool shape_ok = a.shape.size() == 1 || (a.shape.size() == 2 && a.shape[1] >= 1);
  if (a.dtype == NpyDtype::kBytes || !shape_ok)
    bad_member(path, "node_label.npy", a,
               "int or float [N] or [N, 1] class ids, or [N, C] multi-label 0/1 values");
  if (a.shape[0] != s.num_nodes)
    throw InputError(path, "member node_label.npy",
                     "has " + std::to_string(a.shape[0]) + " rows, expected N = " +
                         std::to_string(s.num_nodes) + " (num_nodes_list.npy in raw/data.npz)");
  const int64_t width = a.shape.size() == 2 ? a.shape[1] : 1;
  s.multilabel = width > 1;
  if (s.multilabel)
    s.multilabels.reserve(static_cast<size_t>(keep.count * width));
  else
    s.labels.reserve(static_cast<size_t>(keep.count));
  unlabelled.assign(s.multilabel ? 0 : static_cast<size_t>(keep.count), 0);
  const int64_t kept_first = keep.first * width, kept_end = kept_first + keep.count * width;
  int64_t max_label = -1;
  FirstBadValue bad(path);
  std::vector<uint8_t> bytes;
  for (int64_t at = 0; at < m.elements(); at += kNpzPiece) {
    const int64_t k = std::min(kNpzPiece, m.elements() - at);
    m.read(k, bytes);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t e = at + i;
      const bool kept = e >= kept_first && e < kept_end;
      const double value = value_at(bytes, static_cast<size_t>(i), a.dtype);
      const auto note_bad = [&](const std::string& what) {
        bad.note("member node_label.npy " + at_index(a, e), what);
      };
      if (s.multilabel) {
        const std::string problem = multilabel_problem(value);
        if (!problem.empty()) note_bad(problem);
        if (kept) s.multilabels.push_back(static_cast<uint8_t>(value == 1.0));
        continue;
      }
      if (std::isnan(value)) {
        if (kept) {
          unlabelled[static_cast<size_t>(e - kept_first)] = 1;
          s.labels.push_back(0);
        }
        continue;
      }
      if (is_float(a.dtype) &&
          (value != std::floor(value) || std::fabs(value) >= kMaxFloatClassId)) {
        note_bad(fmt::format(
            "label {} is not a class id (an integer; NaN marks an unlabelled node)", value));
        continue;  // no int64 holds it
      }
      int64_t label = static_cast<int64_t>(value);
      if (a.dtype == NpyDtype::kInt64) std::memcpy(&label, bytes.data() + 8 * i, 8);  // exact
      const std::string problem = class_id_problem(label, s.num_nodes);
      if (!problem.empty()) note_bad(problem);
      max_label = std::max(max_label, label);
      if (kept) s.labels.push_back(label);
    }
  }
  m.finish();
  bad.report();
  if (s.multilabel) {
    s.num_classes = width;
  } else {
    if (max_label < 0 && s.num_nodes > 0)
      throw InputError(path, "member node_label.npy", "every label is NaN (no labelled node)");
    s.num_classes = max_label + 1;
  }
}

// edge_index, int [2, E]: row 0 sources, row 1 targets. The two rows are streamed side by side
// (the member open twice; a deflated one is decompressed twice), every id checked; the in-edges
// of the slice's rows kept.
void read_binary_edges(const std::string& path, const NpzReader& npz, int64_t num_edges,
                       NodeRange keep, GraphSlice& s) {
  const int64_t n = s.num_nodes;
  std::vector<int64_t> src, dst;  // the kept edges
  {  // the readers and their buffers are gone before the rows are built
    NpzMember sources = npz.open("edge_index.npy");
    const NpyArray& a = sources.array();
    if (!npy_is_int(a) || a.shape.size() != 2 || a.shape[0] != 2)
      bad_member(path, "edge_index.npy", a, "int64 [2, E] (row 0 sources, row 1 targets)");
    if (a.shape[1] != num_edges)
      throw InputError(path, "member edge_index.npy",
                       "has " + std::to_string(a.shape[1]) + " columns, expected E = " +
                           std::to_string(num_edges) + " (num_edges_list.npy)");
    const int64_t expected =
        keep.count == n ? num_edges : num_edges / std::max<int64_t>(1, n) * keep.count;
    src.reserve(static_cast<size_t>(expected));
    dst.reserve(static_cast<size_t>(expected));
    NpzMember targets = npz.open("edge_index.npy");
    targets.skip(num_edges);
    FirstBadValue bad(path);
    std::vector<uint8_t> bytes;
    for (int64_t at = 0; at < num_edges; at += kNpzPiece) {
      const int64_t k = std::min(kNpzPiece, num_edges - at);
      sources.read(k, bytes);
      const std::vector<int64_t> from = npy_to_int64(bytes, a.dtype);
      targets.read(k, bytes);
      const std::vector<int64_t> to = npy_to_int64(bytes, a.dtype);
      for (int64_t i = 0; i < k; ++i) {
        bool in_range = true;
        for (int row = 0; row < 2; ++row) {
          const int64_t v = row == 0 ? from[i] : to[i];
          if (v >= 0 && v < n) continue;
          in_range = false;
          bad.note(
              "member edge_index.npy index [" + std::to_string(row) + ", " +
                  std::to_string(at + i) + "]",
              "node id " + std::to_string(v) + out_of_range(n) + " (N from num_nodes_list.npy)");
        }
        if (!in_range || to[i] < keep.first || to[i] >= keep.first + keep.count) continue;
        src.push_back(from[i]);
        dst.push_back(to[i]);
      }
    }
    targets.finish_after(sources);
    bad.report();
  }
  set_slice_rows(s, keep.count, src, dst);
}

// edge_feat, float16/32/64 or int [E, F], streamed beside edge_index's two rows (read_binary_edges
// has checked them): every edge's row, checked as node_feat's values are, added to the sums of its
// ends in the slice; the slice's features made from them.
void read_binary_edge_feature_nodes(const std::string& path, const NpzReader& npz,
                                    int64_t num_edges, NodeRange keep, const EdgeFeatureNodes& how,
                                    GraphSlice& s) {
  if (!npz.has("edge_feat.npy"))
    throw InputError(path, "member edge_feat.npy",
                     fmt::format("missing: dataset.features_from_edges = {} makes node features "
                                 "from the edges' (edge_feat, a row per column of edge_index)",
                                 to_string(how.reduce)));
  NpzMember feats = npz.open("edge_feat.npy");
  const NpyArray& a = feats.array();
  check_feature_member(path, "edge_feat.npy", a, num_edges, "E", "num_edges_list.npy");
  const int64_t dim = a.shape[1];
  NpzMember sources = npz.open("edge_index.npy");
  NpzMember targets = npz.open("edge_index.npy");
  const NpyDtype ids = sources.array().dtype;
  targets.skip(num_edges);
  EdgeFeatureSums sums(keep, how, path + ": member edge_feat.npy");
  sums.start(dim);
  FirstBadValue bad(path);
  const int64_t piece = std::max<int64_t>(1, kNpzPiece / std::max<int64_t>(1, dim));
  std::vector<uint8_t> bytes;
  std::vector<float> rows;
  for (int64_t at = 0; at < num_edges; at += piece) {
    const int64_t k = std::min(piece, num_edges - at);
    sources.read(k, bytes);
    const std::vector<int64_t> from = npy_to_int64(bytes, ids);
    targets.read(k, bytes);
    const std::vector<int64_t> to = npy_to_int64(bytes, ids);
    feats.read(k * dim, bytes);
    rows.resize(static_cast<size_t>(k * dim));
    for (int64_t i = 0; i < k * dim; ++i)
      rows[static_cast<size_t>(i)] = feature_value(bytes, i, a, "edge_feat.npy", at * dim + i, bad);
    for (int64_t e = 0; e < k; ++e) sums.add(from[e], to[e], rows.data() + e * dim);
  }
  feats.finish();
  targets.finish_after(sources);
  bad.report();
  sums.finish(s.feat_dim, s.features);
}

}  // namespace

GraphSlice read_ogb_binary(const fs::path& dir, int rank, int world,
                           const EdgeFeatureNodes& from_edges, std::vector<char>& unlabelled) {
  const std::string data = (dir / "raw" / "data.npz").string();
  const std::string labels = (dir / "raw" / "node-label.npz").string();
  std::error_code ec;
  if (!fs::is_regular_file(labels, ec))
    throw InputError(labels, "",
                     "file not found (the OGB binary layout has raw/data.npz and "
                     "raw/node-label.npz)");
  const NpzReader npz(data, kDataNpzMembers);
  GraphSlice s;
  s.num_nodes = read_list_count(data, npz, "num_nodes_list.npy");
  const int64_t num_edges = read_list_count(data, npz, "num_edges_list.npy");
  const NodeRange keep = slice_range(s.num_nodes, rank, world);
  s.first = keep.first;
  const bool from_edges_rows = from_edges.reduce != FeaturesFromEdges::kNone;
  if (!from_edges_rows) {
    if (!npz.has("node_feat.npy") && npz.has("edge_feat.npy"))
      throw InputError(data, "member node_feat.npy", kFeaturesOnEdges);
    read_binary_features(data, npz, keep, s);
  }
  read_binary_labels(labels, keep, s, unlabelled);
  read_binary_edges(data, npz, num_edges, keep, s);
  if (from_edges_rows) read_binary_edge_feature_nodes(data, npz, num_edges, keep, from_edges, s);
  return s;
}

}  // namespace adaqp
