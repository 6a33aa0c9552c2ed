// The OGB node-property raw layouts: which one a directory holds, the CSV layout (gzip-compressed
// CSV files without header lines), and the split folder both share.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"
#include "class_ids.h"
#include "edge_feature_sums.h"
#include "gz_reader.h"
#include "ogb_layout.h"
#include "split_checks.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

constexpr char kNoOgbLayout[] =
    "neither raw/edge.csv.gz nor raw/data.npz found: the OGB CSV layout has "
    "raw/{edge,node-feat,node-label,num-node-list,num-edge-list}.csv.gz, the OGB binary layout "
    "(ogb.io.DatasetSaver) raw/data.npz and raw/node-label.npz; both have "
    "split/<name>/{train,valid,test}.csv.gz";
// Slices carry no types: a heterogeneous dataset is loaded whole, by one process.
const std::string kHeteroWhole =
    "slices of a heterogeneous dataset (OGB's heterogeneous layout) are not supported: partition "
    "it with partition.method metis, random or contiguous (loaded whole by rank 0): ";
// DatasetSaver.save_split writes a torch pickle of NumPy arrays, which the graph library (no
// libtorch, no Python) cannot read.
constexpr char kSplitDictUnread[] =
    "is a torch pickle (ogb.io.DatasetSaver.save_split), which adaqp does not read: write the "
    "split beside it as train.csv.gz, valid.csv.gz and test.csv.gz (gzip-compressed, one node id "
    "per line)";

// deflate expands at most ~1032x; a bound on the decompressed size used to cap reservations, so a
// corrupt count can never trigger a huge allocation before the data disagrees with it.
constexpr uint64_t kMaxInflation = 1100;

uint64_t max_decompressed_bytes(const std::string& path) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  return ec ? 0 : size * kMaxInflation;
}

}  // namespace

namespace ogb_csv {

std::string quoted(std::string_view field) {
  // A long field (a whole line without commas, a binary file read as text) is shown by its start
  // and length: the message stays one readable line.
  constexpr size_t kShown = 64;
  if (field.size() <= kShown) return "'" + std::string(field) + "'";
  size_t cut = kShown;
  while (cut > 0 && (static_cast<unsigned char>(field[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return fmt::format("'{}...' ({} bytes)", field.substr(0, cut), field.size());
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

// Splits a line at commas into `fields`; returns the count.
size_t split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return fields.size();
    start = comma + 1;
  }
}

// One integer field; InputError at the reader's current line otherwise.
int64_t parse_int(const GzLineReader& in, std::string_view field, const char* what,
                  int64_t column) {
  const std::string_view text = trim(field);
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool whole = ptr == text.data() + text.size() && !text.empty();
  if (ec == std::errc() && whole) return value;
  const std::string where = "line " + std::to_string(in.line_number()) +
                            (column > 0 ? ": column " + std::to_string(column) : "");
  throw InputError(
      in.path(), where,
      std::string(what) + " " + quoted(field) +
          (ec == std::errc::result_out_of_range && whole ? " is beyond the 64-bit integers"
                                                         : " is not an integer"));
}

void check_columns(const GzLineReader& in, size_t got, size_t expected, const std::string& why) {
  if (got != expected)
    throw InputError(in.path(), "line " + std::to_string(in.line_number()),
                     "has " + std::to_string(got) + " column" + (got == 1 ? "" : "s") +
                         ", expected " + std::to_string(expected) + " (" + why + ")");
}

namespace {

// A plain decimal ("-0.0579", "12", "3.25") whose digits make an integer m below 2^24 with at most
// 10 of them after the point: m and 10^k are exact in float32, so one division rounds m / 10^k
// correctly, the value from_chars gives (Clinger's fast path). Returns the position after it, or
// nullptr for anything else (the general parser's).
const char* parse_plain_decimal(const char* p, const char* end, float& out) {
  constexpr uint32_t kExact = uint32_t{1} << 24;
  constexpr float kPowers[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
  const bool negative = p < end && *p == '-';
  const char* q = p + (negative ? 1 : 0);
  uint32_t m = 0;
  int whole = 0, fraction = 0;
  for (; q < end && *q >= '0' && *q <= '9' && m < kExact; ++q, ++whole) m = m * 10 + (*q - '0');
  if (whole == 0) return nullptr;
  if (q < end && *q == '.') {
    for (++q; q < end && *q >= '0' && *q <= '9' && m < kExact && fraction <= 10; ++q, ++fraction)
      m = m * 10 + (*q - '0');
    if (fraction == 0) return nullptr;
  }
  if (m >= kExact || fraction > 10 || (q < end && *q != ',')) return nullptr;
  const float value = static_cast<float>(m) / kPowers[fraction];
  out = negative ? -value : value;
  return q;
}

// Parses the float field starting at `p` (ending at ',' or `end`); returns the position after it.
// Plain decimals skip the general parser (parse_plain_decimal).
const char* parse_feature(const GzLineReader& in, const char* p, const char* end, int64_t column,
                          float& out) {
  if (const char* after = parse_plain_decimal(p, end, out)) return after;
  const char* field_end = static_cast<const char*>(std::memchr(p, ',', end - p));
  if (field_end == nullptr) field_end = end;
  const std::string_view field(p, field_end - p);
  const std::string_view text = trim(field);
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  const std::string where = "line " + std::to_string(in.line_number());
  const std::string what = "column " + std::to_string(column + 1) + ": " + quoted(field);
  if (ptr != text.data() + text.size() || text.empty() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw InputError(in.path(), where, what + " is not a number");
  if (ec == std::errc::result_out_of_range) {
    // Too large for float32 is refused; too small (float64 data written out) rounds to zero or a
    // subnormal, as the binary layouts' float64 values do.
    const double wide = std::strtod(std::string(text).c_str(), nullptr);
    if (!(std::fabs(wide) <= std::numeric_limits<float>::max()))
      throw InputError(in.path(), where, what + " is out of float32 range");
    out = static_cast<float>(wide);
  }
  if (!std::isfinite(out)) throw InputError(in.path(), where, what + " is not finite");
  return field_end;
}

// The width of a feature file's rows: line 1's columns.
int64_t row_width(std::string_view line) {
  return static_cast<int64_t>(std::count(line.begin(), line.end(), ',')) + 1;
}

// One feature line of `dim` columns into out[0, dim); InputError at the line otherwise.
void parse_row(const GzLineReader& in, std::string_view line, int64_t dim, float* out) {
  const char* p = line.data();
  const char* end = p + line.size();
  for (int64_t column = 0;; ++column) {
    if (column == dim) {
      const size_t columns = dim + std::count(p, end, ',') + 1;
      check_columns(in, columns, dim, "as on line 1");
    }
    p = parse_feature(in, p, end, column, out[column]);
    if (p == end) {
      check_columns(in, column + 1, dim, "as on line 1");
      return;
    }
    ++p;
  }
}

}  // namespace

// num-node-list / num-edge-list: exactly one line holding a non-negative count.
int64_t read_count(const std::string& path) {
  GzLineReader in(path);
  std::string_view line;
  if (!in.next(line)) throw InputError(path, "", "is empty, expected one count");
  const int64_t count = parse_int(in, line, "count");
  if (count < 0)
    throw InputError(path, "line 1", "count " + std::to_string(count) + " is negative");
  if (in.next(line))
    throw InputError(
        path, "line " + std::to_string(in.line_number()),
        "unexpected extra line " + quoted(line) + " (only single-graph datasets are supported)");
  return count;
}

[[noreturn]] void too_few_lines(const GzLineReader& in, int64_t expected,
                                const std::string& source) {
  throw InputError(in.path(), "line " + std::to_string(in.line_number()),
                   "file ends after " + std::to_string(in.line_number()) + " lines, but " + source +
                       " says " + std::to_string(expected));
}

void check_line_count(const GzLineReader& in, int64_t expected, const std::string& source) {
  if (in.line_number() != expected) too_few_lines(in, expected, source);
}

[[noreturn]] void too_many_lines(const GzLineReader& in, int64_t expected,
                                 const std::string& source) {
  throw InputError(in.path(), "line " + std::to_string(in.line_number()),
                   "more lines than the " + std::to_string(expected) + " " + source + " says");
}

// Rows [keep.first, keep.first + keep.count) of node-feat; every line is checked.
void read_features(const std::string& path, int64_t num_nodes, NodeRange keep, GraphSlice& g,
                   const std::string& count_file) {
  GzLineReader in(path);
  std::string_view line;
  int64_t dim = 0;
  std::vector<float> skipped;  // a row outside the slice, checked all the same
  while (in.next(line)) {
    if (in.line_number() > num_nodes) too_many_lines(in, num_nodes, count_file);
    if (in.line_number() == 1) {
      dim = row_width(line);
      skipped.resize(static_cast<size_t>(dim));
      const uint64_t bound = max_decompressed_bytes(path) / (2 * static_cast<uint64_t>(dim));
      g.features.reserve(std::min<uint64_t>(keep.count, bound) * dim);
    }
    const int64_t v = in.line_number() - 1;
    if (v >= keep.first && v < keep.first + keep.count) {
      g.features.resize(g.features.size() + static_cast<size_t>(dim));
      parse_row(in, line, dim, g.features.data() + g.features.size() - dim);
    } else {
      parse_row(in, line, dim, skipped.data());
    }
  }
  check_line_count(in, num_nodes, count_file);
  g.feat_dim = dim;
}

namespace {

std::string edge_feature_path(const fs::path& raw, const EdgeFeatureNodes& how) {
  const std::string path = (raw / "edge-feat.csv.gz").string();
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw InputError(path, "dataset.features_from_edges",
                     fmt::format("file not found: features_from_edges = {} makes node features "
                                 "from the edges' (raw/edge-feat.csv.gz, one row per line of "
                                 "raw/edge.csv.gz)",
                                 to_string(how.reduce)));
  return path;
}

}  // namespace

EdgeFeatureRows::EdgeFeatureRows(const fs::path& raw, int64_t num_edges, NodeRange keep,
                                 const EdgeFeatureNodes& how)
    : num_edges_(num_edges), feats_(edge_feature_path(raw, how)), sums_(keep, how, feats_.path()) {}

void EdgeFeatureRows::add(int64_t src, int64_t dst) {
  std::string_view line;
  // read_edges stops at num_edges lines: a file ending here has fewer.
  if (!feats_.next(line)) too_few_lines(feats_, num_edges_, "num-edge-list.csv.gz");
  if (feats_.line_number() == 1) {
    const int64_t dim = row_width(line);
    // Every row takes at least 2 bytes a value: a wider line 1 than the file could hold in
    // num_edges rows (a file written transposed) is refused before the sums are allocated.
    if (static_cast<uint64_t>(dim) >
        max_decompressed_bytes(feats_.path()) / (2 * std::max<uint64_t>(1, num_edges_)))
      throw InputError(feats_.path(), "line 1",
                       fmt::format("has {} columns: {} rows of them (num-edge-list.csv.gz) "
                                   "cannot fit in this file",
                                   dim, num_edges_));
    row_.resize(static_cast<size_t>(dim));
    sums_.start(dim);
  }
  parse_row(feats_, line, static_cast<int64_t>(row_.size()), row_.data());
  sums_.add(src, dst, row_.data());
}

void EdgeFeatureRows::finish(GraphSlice& g) {
  // read_edges has passed on exactly num_edges edges, each taking a line.
  std::string_view line;
  if (feats_.next(line)) too_many_lines(feats_, num_edges_, "num-edge-list.csv.gz");
  sums_.finish(g.feat_dim, g.features);
}

// Labels of rows [keep.first, keep.first + keep.count); the class count from every line.
void read_labels(const std::string& path, int64_t num_nodes, NodeRange keep, GraphSlice& g,
                 const std::string& count_file) {
  GzLineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  size_t columns = 0;
  int64_t max_label = -1;
  while (in.next(line)) {
    if (in.line_number() > num_nodes) too_many_lines(in, num_nodes, count_file);
    const size_t n = split_fields(line, fields);
    if (in.line_number() == 1) {
      columns = n;
      g.multilabel = columns > 1;
      g.num_classes = g.multilabel ? static_cast<int64_t>(columns) : 0;
      // A line holds at least 2 bytes a value: the file's size bounds the rows it can hold.
      const uint64_t rows =
          std::min<uint64_t>(keep.count, max_decompressed_bytes(path) / (2 * columns));
      if (g.multilabel)
        g.multilabels.reserve(rows * columns);
      else
        g.labels.reserve(rows);
    }
    check_columns(in, n, columns, "as on line 1");
    const int64_t v = in.line_number() - 1;
    const bool kept = v >= keep.first && v < keep.first + keep.count;
    const std::string where = "line " + std::to_string(in.line_number());
    if (g.multilabel) {
      for (size_t c = 0; c < n; ++c) {
        const int64_t value =
            parse_int(in, fields[c], "multi-label value", static_cast<int64_t>(c + 1));
        const std::string problem = multilabel_problem(static_cast<double>(value));
        if (!problem.empty())
          throw InputError(path, where, "column " + std::to_string(c + 1) + ": " + problem);
        if (kept) g.multilabels.push_back(static_cast<uint8_t>(value));
      }
    } else {
      const int64_t label = parse_int(in, fields[0], "label");
      const std::string problem = class_id_problem(label, num_nodes);
      if (!problem.empty()) throw InputError(path, where, problem);
      max_label = std::max(max_label, label);
      if (kept) g.labels.push_back(label);
    }
  }
  check_line_count(in, num_nodes, count_file);
  if (!g.multilabel) g.num_classes = max_label + 1;
}

// The in-edges of rows [keep.first, keep.first + keep.count) as CSR rows (sources sorted,
// duplicates kept: Graph::from_edges); every line is checked.
void read_edges(const std::string& path, int64_t num_nodes, int64_t num_edges, NodeRange keep,
                GraphSlice& g, EdgeFeatureRows* feature_rows) {
  GzLineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  std::vector<int64_t> src, dst;  // the kept edges
  const uint64_t expected = keep.count == num_nodes
                                ? num_edges
                                : num_edges / std::max<int64_t>(1, num_nodes) * keep.count;
  const uint64_t reserve = std::min<uint64_t>(expected, max_decompressed_bytes(path) / 4);
  src.reserve(reserve);
  dst.reserve(reserve);
  while (in.next(line)) {
    if (in.line_number() > num_edges) too_many_lines(in, num_edges, "num-edge-list.csv.gz");
    check_columns(in, split_fields(line, fields), 2, "src,dst");
    const int64_t ends[2] = {parse_int(in, fields[0], "source node id"),
                             parse_int(in, fields[1], "target node id")};
    for (int k = 0; k < 2; ++k) {
      if (ends[k] < 0 || ends[k] >= num_nodes)
        throw InputError(path, "line " + std::to_string(in.line_number()),
                         std::string(k == 0 ? "source" : "target") + " node id " +
                             std::to_string(ends[k]) + " is out of range [0, " +
                             std::to_string(num_nodes) + ")");
    }
    if (feature_rows != nullptr) feature_rows->add(ends[0], ends[1]);
    if (ends[1] < keep.first || ends[1] >= keep.first + keep.count) continue;
    src.push_back(ends[0]);
    dst.push_back(ends[1]);
  }
  check_line_count(in, num_edges, "num-edge-list.csv.gz");
  set_slice_rows(g, keep.count, src, dst);
}

// One split file's ids inside `keep`, ascending; `owner` (one entry per kept node) records which
// split (1, 2, 3) already holds each, `unlabelled` (empty, or one entry per kept node) the nodes no
// split may name. Every line is checked for range.
std::vector<int64_t> read_split(const std::string& path, int64_t num_nodes, NodeRange keep,
                                std::vector<char>& owner, char tag,
                                const std::vector<std::string>& names,
                                const std::vector<char>& unlabelled) {
  GzLineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  std::vector<int64_t> ids;
  while (in.next(line)) {
    check_columns(in, split_fields(line, fields), 1, "one node id per line");
    const int64_t v = parse_int(in, fields[0], "node id");
    const std::string where = "line " + std::to_string(in.line_number());
    if (v < 0 || v >= num_nodes) throw InputError(path, where, node_out_of_range(v, num_nodes));
    if (v < keep.first || v >= keep.first + keep.count) continue;
    if (!unlabelled.empty() && unlabelled[static_cast<size_t>(v - keep.first)])
      throw InputError(path, where,
                       "node id " + std::to_string(v) +
                           " is unlabelled (its label in raw/node-label.npz is NaN); a split may "
                           "name labelled nodes only");
    claim_split_node(owner[static_cast<size_t>(v - keep.first)], tag, v, names, path, where);
    ids.push_back(v);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string choose_split(const fs::path& dir, const std::string& requested) {
  const fs::path split_dir = dir / "split";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(split_dir, ec)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::string listed;
  for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + n;
  if (names.empty()) throw InputError(split_dir.string(), "", "no split folder found");
  if (!requested.empty()) {
    if (std::find(names.begin(), names.end(), requested) == names.end())
      throw InputError(split_dir.string(), "",
                       "split '" + requested + "' not found (available: " + listed + ")");
    return requested;
  }
  if (names.size() > 1)
    throw InputError(split_dir.string(), "",
                     "several splits found (" + listed + "); choose one with dataset.split");
  return names.front();
}

}  // namespace ogb_csv

namespace {

// The CSV layout's nodes, edges, features and labels of rank `rank`'s slice among `world`.
GraphSlice read_ogb_csv(const fs::path& root, int rank, int world,
                        const EdgeFeatureNodes& from_edges) {
  const fs::path raw = root / "raw";
  GraphSlice g;
  const int64_t num_nodes = ogb_csv::read_count((raw / "num-node-list.csv.gz").string());
  const int64_t num_edges = ogb_csv::read_count((raw / "num-edge-list.csv.gz").string());
  const NodeRange keep = slice_range(num_nodes, rank, world);
  g.num_nodes = num_nodes;
  g.first = keep.first;
  const bool from_edges_rows = from_edges.reduce != FeaturesFromEdges::kNone;
  if (!from_edges_rows) {
    std::error_code ec;
    if (!fs::exists(raw / "node-feat.csv.gz", ec) && fs::exists(raw / "edge-feat.csv.gz", ec))
      throw InputError((raw / "node-feat.csv.gz").string(), "",
                       "file not found, and the dataset has raw/edge-feat.csv.gz (ogbn-proteins' "
                       "layout): set dataset.features_from_edges to mean or sum to make node "
                       "features from it");
    ogb_csv::read_features((raw / "node-feat.csv.gz").string(), num_nodes, keep, g,
                           "num-node-list.csv.gz");
  }
  ogb_csv::read_labels((raw / "node-label.csv.gz").string(), num_nodes, keep, g,
                       "num-node-list.csv.gz");
  std::optional<ogb_csv::EdgeFeatureRows> feature_rows;
  if (from_edges_rows) feature_rows.emplace(raw, num_edges, keep, from_edges);
  ogb_csv::read_edges((raw / "edge.csv.gz").string(), num_nodes, num_edges, keep, g,
                      feature_rows ? &*feature_rows : nullptr);
  if (feature_rows) feature_rows->finish(g);
  return g;
}

}  // namespace

EdgeFeatureNodes edge_feature_nodes(const DatasetSpec& spec) {
  return EdgeFeatureNodes{spec.features_from_edges, spec.transform.symmetrize};
}

GraphSlice load_ogb_slice(const std::string& dir, const std::string& split, int rank, int world,
                          const EdgeFeatureNodes& from_edges) {
  const fs::path root(dir);
  std::error_code ec;
  if (is_ogb_hetero(root)) throw ConfigError(kHeteroWhole + dir);
  const bool csv = fs::exists(root / "raw" / "edge.csv.gz", ec);
  if (!csv && !fs::exists(root / "raw" / "data.npz", ec)) throw InputError(dir, "", kNoOgbLayout);
  const fs::path split_dir = root / "split" / ogb_csv::choose_split(root, split);
  const std::vector<std::string> names = {"train.csv.gz", "valid.csv.gz", "test.csv.gz"};
  if (!fs::exists(split_dir / names[0], ec) && fs::exists(split_dir / "split_dict.pt", ec))
    throw InputError((split_dir / "split_dict.pt").string(), "", kSplitDictUnread);
  std::vector<char> unlabelled;
  GraphSlice g = csv ? read_ogb_csv(root, rank, world, from_edges)
                     : read_ogb_binary(root, rank, world, from_edges, unlabelled);
  g.name = directory_name(root);
  const NodeRange keep{g.first, g.count()};
  std::vector<char> owner(static_cast<size_t>(keep.count), 0);
  g.train = ogb_csv::read_split((split_dir / names[0]).string(), g.num_nodes, keep, owner, 1, names,
                                unlabelled);
  g.valid = ogb_csv::read_split((split_dir / names[1]).string(), g.num_nodes, keep, owner, 2, names,
                                unlabelled);
  g.test = ogb_csv::read_split((split_dir / names[2]).string(), g.num_nodes, keep, owner, 3, names,
                               unlabelled);
  return g;
}

Graph load_ogb(const std::string& dir, const std::string& split,
               const EdgeFeatureNodes& from_edges) {
  if (is_ogb_hetero(dir)) {
    if (from_edges.reduce != FeaturesFromEdges::kNone)
      throw ConfigError(fmt::format(
          "dataset.features_from_edges = {}: {} is OGB's heterogeneous layout, whose edges are "
          "relations' and carry no edge-feat; use none",
          to_string(from_edges.reduce), dir));
    return load_ogb_hetero(dir, split);
  }
  return whole_graph(load_ogb_slice(dir, split, 0, 1, from_edges));
}

}  // namespace adaqp
