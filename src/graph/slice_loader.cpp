#include "adaqp/graph/slice_loader.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <type_traits>
#include <utility>

#include "adaqp/comm/all_to_all.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/crc.h"
#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/npy.h"
#include "class_ids.h"
#include "numpy_edge_features.h"
#include "numpy_layout.h"
#include "row_transforms.h"
#include "split_checks.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

constexpr int kSliceTag = 32758;
// Index arrays of the splits are read in pieces of this many ids.
constexpr int64_t kSplitPiece = int64_t{1} << 20;

// feat.npy: this slice's rows; sets num_nodes, feat_dim.
void read_feature_rows(const std::string& path, GraphSlice& s, int rank, int world) {
  const NpyHeader h = read_npy_header(path);
  check_feature_layout(path, h.array);
  s.num_nodes = h.array.shape[0];
  s.feat_dim = h.array.shape[1];
  const NodeRange range = slice_range(s.num_nodes, rank, world);
  s.first = range.first;
  const std::vector<uint8_t> bytes =
      read_npy_range(path, h, range.first * s.feat_dim, range.count * s.feat_dim);
  s.features.resize(bytes.size() / sizeof(float));
  std::memcpy(s.features.data(), bytes.data(), bytes.size());
  for (size_t i = 0; i < s.features.size(); ++i) {
    if (!std::isfinite(s.features[i]))
      throw InputError(path,
                       index2(range.first + static_cast<int64_t>(i) / s.feat_dim,
                              static_cast<int64_t>(i) % s.feat_dim),
                       fmt::format("value {} is not finite", s.features[i]));
  }
}

// edge_index.npy: this rank's share of the columns, checked; (source, target) pairs.
std::vector<std::pair<int64_t, int64_t>> read_edge_share(const std::string& path, int64_t n,
                                                         const char* nodes_file, int rank,
                                                         int world) {
  const NpyHeader h = read_npy_header(path);
  check_edge_layout(path, h.array);
  const int64_t e = h.array.shape[1];
  const NodeRange share = slice_range(e, rank, world);
  const std::vector<int64_t> src =
      npy_to_int64(read_npy_range(path, h, share.first, share.count), h.array.dtype);
  const std::vector<int64_t> dst =
      npy_to_int64(read_npy_range(path, h, e + share.first, share.count), h.array.dtype);
  std::vector<std::pair<int64_t, int64_t>> edges(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    for (int row = 0; row < 2; ++row) {
      const int64_t v = row == 0 ? src[i] : dst[i];
      if (v < 0 || v >= n)
        throw InputError(path, index2(row, share.first + static_cast<int64_t>(i)),
                         "node id " + std::to_string(v) + " is out of range [0, " +
                             std::to_string(n) + ") (N from " + nodes_file + ")");
    }
    edges[i] = {src[i], dst[i]};
  }
  return edges;
}

// label.npy: this slice's rows; sets num_classes (single-label: this slice's largest id + 1, to be
// reduced over ranks) and multilabel.
void read_label_rows(const std::string& path, const char* nodes_file, GraphSlice& s) {
  const NpyHeader h = read_npy_header(path);
  const NpyArray& a = h.array;
  const int64_t n = s.num_nodes, count = s.count();
  if (labels_are_class_ids(path, a, n, nodes_file)) {
    s.labels = npy_to_int64(read_npy_range(path, h, s.first, count), a.dtype);
    int64_t max_label = -1;
    for (int64_t i = 0; i < count; ++i) {
      const std::string problem = class_id_problem(s.labels[i], n);
      if (!problem.empty()) throw InputError(path, index1(s.first + i), problem);
      max_label = std::max(max_label, s.labels[i]);
    }
    s.num_classes = max_label + 1;
    return;
  }
  s.multilabel = true;
  s.num_classes = a.shape[1];
  const std::vector<uint8_t> bytes =
      read_npy_range(path, h, s.first * s.num_classes, count * s.num_classes);
  s.multilabels.resize(static_cast<size_t>(count * s.num_classes));
  for (size_t i = 0; i < s.multilabels.size(); ++i) {
    const double value = multilabel_value(bytes.data(), a.dtype, static_cast<int64_t>(i));
    const std::string problem = multilabel_problem(value);
    if (!problem.empty())
      throw InputError(path,
                       index2(s.first + static_cast<int64_t>(i) / s.num_classes,
                              static_cast<int64_t>(i) % s.num_classes),
                       problem);
    s.multilabels[i] = static_cast<uint8_t>(value);
  }
}

// One split's ids inside the slice, from an index array (read in pieces) or a bool mask (this
// slice's range); `owner` (one entry per slice node) records earlier splits.
std::vector<int64_t> read_split_ids(const std::string& path, const GraphSlice& s,
                                    std::vector<char>& owner, char tag,
                                    const std::vector<std::string>& names) {
  const NpyHeader h = read_npy_header(path);
  const NpyArray& a = h.array;
  const int64_t n = s.num_nodes;
  std::vector<std::pair<int64_t, int64_t>> ids;  // (node id, index in the file)
  if (split_is_mask(path, a, n)) {
    const std::vector<uint8_t> mask = read_npy_range(path, h, s.first, s.count());
    for (int64_t i = 0; i < s.count(); ++i) {
      if (mask[i] > 1)
        throw InputError(path, index1(s.first + i),
                         "mask byte " + std::to_string(mask[i]) + " is not 0 or 1");
      if (mask[i] == 1) ids.emplace_back(s.first + i, s.first + i);
    }
  } else {
    for (int64_t at = 0; at < h.elements; at += kSplitPiece) {
      const int64_t k = std::min(kSplitPiece, h.elements - at);
      const std::vector<int64_t> piece = npy_to_int64(read_npy_range(path, h, at, k), a.dtype);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t v = piece[i];
        if (v < 0 || v >= n) throw InputError(path, index1(at + i), node_out_of_range(v, n));
        if (s.holds(v)) ids.emplace_back(v, at + i);
      }
    }
  }
  std::vector<int64_t> out;
  out.reserve(ids.size());
  for (const auto& [v, at] : ids) {
    claim_split_node(owner[static_cast<size_t>(v - s.first)], tag, v, names, path, index1(at));
    out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Edges (source, target) to the slices holding their targets, then this slice's rows (sources
// sorted, duplicates kept: Graph::from_edges).
void build_rows(GraphSlice& s, const std::vector<std::pair<int64_t, int64_t>>& edges,
                Communicator& comm) {
  const int world = comm.size();
  std::vector<std::vector<int64_t>> out(world);
  for (const auto& [u, v] : edges) {
    auto& to = out[slice_holder(s.num_nodes, world, v)];
    to.push_back(v);
    to.push_back(u);
  }
  Received<int64_t> in = all_to_all(comm, out, kSliceTag);
  std::vector<std::vector<int64_t>>().swap(out);
  std::vector<int64_t> src, dst;
  src.reserve(in.data.size() / 2);
  dst.reserve(in.data.size() / 2);
  for (size_t i = 0; i + 1 < in.data.size(); i += 2) {
    dst.push_back(in.data[i]);
    src.push_back(in.data[i + 1]);
  }
  std::vector<int64_t>().swap(in.data);
  set_slice_rows(s, s.count(), src, dst);
}

GraphSlice load_numpy_slice(const std::string& dir, const EdgeFeatureNodes& from_edges,
                            Communicator& comm, const CollectiveStep& step) {
  const int rank = comm.rank(), world = comm.size();
  const auto file = [&dir](const std::string& name) { return (fs::path(dir) / name).string(); };
  GraphSlice s;
  s.name = directory_name(dir);
  std::vector<std::pair<int64_t, int64_t>> edges;
  step([&] {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / kNodeTypesJson, ec))
      throw ConfigError(
          "slices of a heterogeneous dataset (" + std::string(kNodeTypesJson) +
          ") are not supported: partition it with partition.method metis, random or contiguous "
          "(loaded whole by rank 0): " +
          dir);
    const bool edge_rows = from_edges.reduce != FeaturesFromEdges::kNone;
    if (edge_rows) {
      s.num_nodes = numpy_nodes_from_labels(file("label.npy"));
      s.first = slice_range(s.num_nodes, rank, world).first;
    } else {
      read_feature_rows(numpy_feature_file(dir), s, rank, world);
    }
    const NodeRange range = slice_range(s.num_nodes, rank, world);
    s.indptr.assign(static_cast<size_t>(range.count) + 1, 0);
    const char* nodes_file = numpy_nodes_file(from_edges);
    edges = read_edge_share(file("edge_index.npy"), s.num_nodes, nodes_file, rank, world);
    if (edge_rows) read_numpy_edge_feature_nodes(dir, range, from_edges, s.feat_dim, s.features);
    read_label_rows(file("label.npy"), nodes_file, s);
    const std::vector<std::string> names = {"train.npy", "valid.npy", "test.npy"};
    std::vector<char> owner(static_cast<size_t>(s.count()), 0);
    s.train = read_split_ids(file(names[0]), s, owner, 1, names);
    s.valid = read_split_ids(file(names[1]), s, owner, 2, names);
    s.test = read_split_ids(file(names[2]), s, owner, 3, names);
  });
  build_rows(s, edges, comm);
  if (!s.multilabel) {
    double classes = static_cast<double>(s.num_classes);
    comm.allreduce_max(&classes, 1);
    s.num_classes = static_cast<int64_t>(classes);
  }
  return s;
}

// Rank 0 generates the whole graph and sends every rank its slice.
GraphSlice scatter_slices(const DatasetSpec& spec, Communicator& comm, const CollectiveStep& step) {
  const int rank = comm.rank(), world = comm.size();
  std::vector<GraphSlice> slices;
  GraphSlice s;
  step([&] {
    if (rank != 0) return;
    Graph g = load_dataset(spec);
    spdlog::info(
        "dataset format {} has no slice reader: rank 0 generated the graph whole and sends every "
        "rank its slice (the NumPy, OGB and GraphSAINT layouts are read in slices)",
        to_string(resolve_dataset_format(spec)));
    for (int r = 0; r < world; ++r) slices.push_back(slice_of(g, r, world));
    s.name = g.name;
  });
  int64_t scalars[5] = {};
  if (rank == 0) {
    const GraphSlice& z = slices[0];
    scalars[0] = z.num_nodes;
    scalars[1] = z.feat_dim;
    scalars[2] = z.num_classes;
    scalars[3] = z.multilabel ? 1 : 0;
    scalars[4] = static_cast<int64_t>(s.name.size());
  }
  comm.broadcast(scalars, sizeof scalars, 0);
  s.name.resize(static_cast<size_t>(scalars[4]));
  if (scalars[4] > 0) comm.broadcast(s.name.data(), s.name.size(), 0);
  s.num_nodes = scalars[0];
  s.feat_dim = scalars[1];
  s.num_classes = scalars[2];
  s.multilabel = scalars[3] != 0;
  s.first = slice_range(s.num_nodes, rank, world).first;
  // One field at a time: rank 0 sends, everyone receives its own.
  const auto field = [&](auto member) {
    using V = std::decay_t<decltype(s.*member)>;
    std::vector<V> out(world);
    if (rank == 0)
      for (int r = 0; r < world; ++r) out[r] = std::move(slices[r].*member);
    s.*member = std::move(all_to_all(comm, out, kSliceTag).data);
  };
  field(&GraphSlice::indptr);
  field(&GraphSlice::indices);
  field(&GraphSlice::features);
  field(&GraphSlice::labels);
  field(&GraphSlice::multilabels);
  field(&GraphSlice::train);
  field(&GraphSlice::valid);
  field(&GraphSlice::test);
  return s;
}

uint32_t crc_value(uint32_t crc, int64_t value) {
  return crc_bytes(crc, &value, sizeof value);
}

// The CRC of `crc`'s input followed by every rank's piece in rank order.
template <typename T>
uint32_t crc_pieces(uint32_t crc, const std::vector<T>& piece, Communicator& comm) {
  const uint64_t mine[2] = {crc_bytes(kCrcEmpty, piece.data(), piece.size() * sizeof(T)),
                            piece.size() * sizeof(T)};
  std::vector<uint64_t> all(2 * static_cast<size_t>(comm.size()));
  comm.allgather(mine, all.data(), sizeof mine);
  for (int r = 0; r < comm.size(); ++r)
    crc = static_cast<uint32_t>(
        crc32_combine(crc, static_cast<uLong>(all[2 * r]), static_cast<z_off_t>(all[2 * r + 1])));
  return crc;
}

// crc_add of graph.cpp over a vector the ranks hold in pieces: its length, then its bytes.
template <typename T>
uint32_t crc_vector(uint32_t crc, const std::vector<T>& piece, Communicator& comm) {
  int64_t total = static_cast<int64_t>(piece.size());
  comm.allreduce_sum(&total, 1);
  const uint64_t count = static_cast<uint64_t>(total);
  return crc_pieces(crc_bytes(crc, &count, sizeof count), piece, comm);
}

}  // namespace

GraphSlice load_slice(const DatasetSpec& spec, Communicator& comm, const CollectiveStep& step) {
  const double start = steady_now_s();
  DatasetFormat format = DatasetFormat::kAuto;
  step([&] {
    format = resolve_dataset_format(spec);
    // Slices are never typed (the heterogeneous layouts are refused below).
    if (format == DatasetFormat::kSynthetic && spec.synthetic.heterogeneous)
      throw ConfigError(
          "slices of a heterogeneous graph (dataset.synthetic.heterogeneous) are not supported: "
          "partition it with partition.method metis, random or contiguous");
    if (spec.transform.add_reverse)
      throw ConfigError(
          "dataset.add_reverse applies to heterogeneous graphs, whose slices are not supported "
          "(partition.method ptscotch); use dataset.symmetrize for a homogeneous graph");
  });
  GraphSlice s;
  if (format != DatasetFormat::kSynthetic) {
    if (format == DatasetFormat::kNumpy) {
      s = load_numpy_slice(spec.path, edge_feature_nodes(spec), comm, step);
    } else if (format == DatasetFormat::kOgb) {
      step([&] {
        s = load_ogb_slice(spec.path, spec.split, comm.rank(), comm.size(),
                           edge_feature_nodes(spec));
      });
    } else {
      step([&] { s = load_graphsaint_slice(spec.path, comm.rank(), comm.size()); });
    }
    if (spec.transform.symmetrize) symmetrize_slices(s, comm);
    if (spec.transform.self_loops) set_slice_self_loops(s);
    if (spec.transform.row_normalize) row_normalize_slice(s);
  } else {
    s = scatter_slices(spec, comm, step);
  }
  // What the slices hold, all ranks together: edges, and bytes of structure and node data.
  int64_t totals[2] = {
      s.num_edges(), static_cast<int64_t>(
                         sizeof(int64_t) * (s.indptr.size() + s.indices.size() + s.labels.size()) +
                         sizeof(float) * s.features.size() + s.multilabels.size())};
  comm.allreduce_sum(totals, 2);
  const double seconds = steady_now_s() - start;
  if (comm.rank() == 0) {
    spdlog::info(
        "loaded {} ({}) as {} slices: {} nodes, {} edges, {} features, {} classes{}, {:.1f} MiB "
        "in {:.2f} s ({:.1f} MiB/s); rank 0 holds nodes [{}, {}) with {} in-edges",
        s.name, to_string(format), comm.size(), s.num_nodes, totals[0], s.feat_dim, s.num_classes,
        s.multilabel ? " (multi-label)" : "", totals[1] / 1048576.0, seconds,
        totals[1] / 1048576.0 / std::max(seconds, 1e-9), s.first, s.first + s.count(),
        s.num_edges());
  }
  return s;
}

void symmetrize_slices(GraphSlice& s, Communicator& comm) {
  const int world = comm.size();
  std::vector<std::vector<int64_t>> out(world);
  for (int64_t i = 0; i < s.count(); ++i) {
    for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) {
      auto& to = out[slice_holder(s.num_nodes, world, s.indices[e])];
      to.push_back(s.indices[e]);  // target of the reversed edge
      to.push_back(s.first + i);   // its source
    }
  }
  const std::vector<int64_t> in = all_to_all(comm, out, kSliceTag).data;
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(s.count()));
  for (int64_t i = 0; i < s.count(); ++i)
    rows[i].assign(s.indices.begin() + s.indptr[i], s.indices.begin() + s.indptr[i + 1]);
  for (size_t k = 0; k + 1 < in.size(); k += 2) rows[in[k] - s.first].push_back(in[k + 1]);
  s.indices.clear();
  for (int64_t i = 0; i < s.count(); ++i) {
    std::sort(rows[i].begin(), rows[i].end());
    s.indices.insert(s.indices.end(), rows[i].begin(), rows[i].end());
    s.indptr[i + 1] = static_cast<int64_t>(s.indices.size());
    std::vector<int64_t>().swap(rows[i]);
  }
  drop_repeated_row_entries(s.indptr, s.indices);
}

std::string slice_fingerprint(const GraphSlice& s, Communicator& comm) {
  const uint32_t empty = kCrcEmpty;
  // indptr as the whole graph's: this slice's rows at their global edge offsets; the final entry
  // (the edge count) belongs to the last rank.
  int64_t offset = 0;
  {
    std::vector<int64_t> edges(static_cast<size_t>(comm.size()));
    const int64_t mine = s.num_edges();
    comm.allgather(&mine, edges.data(), sizeof mine);
    for (int r = 0; r < comm.rank(); ++r) offset += edges[r];
  }
  const bool last = comm.rank() == comm.size() - 1;
  std::vector<int64_t> indptr(s.indptr.begin(), s.indptr.end() - (last ? 0 : 1));
  for (int64_t& x : indptr) x += offset;
  uint32_t structure = crc_value(empty, s.num_nodes);
  structure = crc_vector(structure, indptr, comm);
  structure = crc_vector(structure, s.indices, comm);
  const uint32_t features = crc_vector(crc_value(empty, s.feat_dim), s.features, comm);
  uint32_t labels = crc_value(crc_value(empty, s.num_classes), int64_t{s.multilabel});
  labels = crc_vector(crc_vector(labels, s.labels, comm), s.multilabels, comm);
  const uint32_t splits =
      crc_vector(crc_vector(crc_vector(empty, s.train, comm), s.valid, comm), s.test, comm);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%08x%08x%08x%08x", structure, features, labels, splits);
  return hex;
}

}  // namespace adaqp
