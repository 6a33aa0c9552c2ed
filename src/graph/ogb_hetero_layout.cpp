// OGB's heterogeneous raw layout (as ogbn-mag ships it; dataset.h): node types and their counts,
// one edge list per (source type, relation, destination type), features and labels per type, a
// split per type. Read whole into one Graph: node types occupy contiguous id ranges in the order of
// their names, relations are ordered as their (head, relation, tail) triplets, as OGB orders both.
// Written from a typed Graph by save_ogb_hetero.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph.h"
#include "atomic_dir.h"
#include "gz_reader.h"
#include "ogb_layout.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

constexpr char kNodeDict[] = "num-node-dict.csv.gz";

// Names become folder names (<head>___<relation>___<tail>) and CSV fields.
bool bad_name(const std::string& name) {
  return name.empty() || name.find_first_of("/,") != std::string::npos ||
         name.find("___") != std::string::npos;
}

struct NodeType {
  std::string name;
  int64_t count = 0;
};

// raw/num-node-dict.csv.gz: line 1 the node types' names, line 2 their node counts; sorted by name.
std::vector<NodeType> read_node_dict(const std::string& path) {
  GzLineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  if (!in.next(line)) throw InputError(path, "", "is empty, expected a line of node type names");
  std::vector<NodeType> types;
  for (size_t i = 0, n = ogb_csv::split_fields(line, fields); i < n; ++i) {
    const std::string name(fields[i]);
    if (bad_name(name))
      throw InputError(
          path, "line 1",
          "node type name " + ogb_csv::quoted(name) + " is empty or holds '/' or '___'");
    for (const NodeType& t : types) {
      if (t.name == name)
        throw InputError(path, "line 1", "node type " + ogb_csv::quoted(name) + " twice");
    }
    types.push_back({name, 0});
  }
  if (!in.next(line)) throw InputError(path, "", "has no line 2 (the node counts)");
  ogb_csv::check_columns(in, ogb_csv::split_fields(line, fields), types.size(),
                         "one count per node type");
  int64_t total = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    types[i].count = ogb_csv::parse_int(in, fields[i], "node count");
    if (types[i].count < 0)
      throw InputError(path, "line 2",
                       "node type " + ogb_csv::quoted(types[i].name) + ": count " +
                           std::to_string(types[i].count) + " is negative");
    // Checked before anything is sized by it: no file bounds a featureless type's count.
    if (types[i].count >= kMaxNodes - total)
      throw InputError(path, "line 2",
                       "node type " + ogb_csv::quoted(types[i].name) + ": count " +
                           std::to_string(types[i].count) +
                           " takes the graph to 2^31 nodes or more");
    total += types[i].count;
  }
  if (in.next(line))
    throw InputError(path, "line " + std::to_string(in.line_number()),
                     "unexpected extra line (only single-graph datasets are supported)");
  std::sort(types.begin(), types.end(),
            [](const NodeType& a, const NodeType& b) { return a.name < b.name; });
  return types;
}

int32_t type_index(const std::vector<NodeType>& types, std::string_view name) {
  for (size_t t = 0; t < types.size(); ++t) {
    if (types[t].name == name) return static_cast<int32_t>(t);
  }
  return -1;
}

// raw/triplet-type-list.csv.gz: one "head,relation,tail" line per relation; sorted as triplets.
std::vector<Relation> read_triplets(const std::string& path, const std::vector<NodeType>& types) {
  GzLineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields;
  std::vector<std::pair<std::vector<std::string>, Relation>> sorted;
  while (in.next(line)) {
    ogb_csv::check_columns(in, ogb_csv::split_fields(line, fields), 3, "head,relation,tail");
    const std::string where = "line " + std::to_string(in.line_number());
    Relation r{type_index(types, fields[0]), std::string(fields[1]), type_index(types, fields[2])};
    for (int k : {0, 2}) {
      if ((k == 0 ? r.src_type : r.dst_type) < 0)
        throw InputError(path, where,
                         "node type " + ogb_csv::quoted(fields[k]) + " is not in " + kNodeDict);
    }
    if (bad_name(r.name))
      throw InputError(
          path, where,
          "relation name " + ogb_csv::quoted(r.name) + " is empty or holds '/' or '___'");
    std::vector<std::string> key = {std::string(fields[0]), r.name, std::string(fields[2])};
    for (const auto& s : sorted) {
      if (s.first == key)
        throw InputError(path, where, "relation " + ogb_csv::quoted(line) + " twice");
    }
    sorted.emplace_back(std::move(key), std::move(r));
  }
  if (sorted.empty()) throw InputError(path, "", "lists no relation");
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Relation> relations;
  for (auto& s : sorted) relations.push_back(std::move(s.second));
  return relations;
}

// Global ids of the nodes of type t: [offset[t], offset[t] + count).
struct Edges {
  std::vector<int64_t> src, dst;
  std::vector<int32_t> rel;
};

// One relation's raw/relations/<head>___<relation>___<tail>/ folder: edge.csv.gz of "src,dst" ids
// within their types, as many as its num-edge-list.csv.gz says.
void read_relation(const fs::path& raw, const std::vector<NodeType>& types,
                   const std::vector<int64_t>& offset, const Relation& r, int32_t index,
                   Edges& edges) {
  const fs::path dir = raw / "relations" /
                       (types[r.src_type].name + "___" + r.name + "___" + types[r.dst_type].name);
  const int64_t count = ogb_csv::read_count((dir / "num-edge-list.csv.gz").string());
  GzLineReader in((dir / "edge.csv.gz").string());
  std::string_view line;
  std::vector<std::string_view> fields;
  while (in.next(line)) {
    if (in.line_number() > count) ogb_csv::too_many_lines(in, count, "num-edge-list.csv.gz");
    ogb_csv::check_columns(in, ogb_csv::split_fields(line, fields), 2, "src,dst");
    const int32_t type[2] = {r.src_type, r.dst_type};
    int64_t ends[2];
    for (int k = 0; k < 2; ++k) {
      ends[k] = ogb_csv::parse_int(in, fields[k], k == 0 ? "source node id" : "target node id");
      const NodeType& t = types[type[k]];
      if (ends[k] < 0 || ends[k] >= t.count)
        throw InputError(in.path(), "line " + std::to_string(in.line_number()),
                         std::string(k == 0 ? "source" : "target") + " node id " +
                             std::to_string(ends[k]) + " is out of range [0, " +
                             std::to_string(t.count) + ") of node type " + ogb_csv::quoted(t.name));
    }
    edges.src.push_back(offset[r.src_type] + ends[0]);
    edges.dst.push_back(offset[r.dst_type] + ends[1]);
    edges.rel.push_back(index);
  }
  ogb_csv::check_line_count(in, count, "num-edge-list.csv.gz");
}

// A folder of `dir` (raw/node-feat or raw/node-label) that names no node type would be ignored:
// a misspelt type's data, silently missing.
void refuse_unknown_type_folders(const fs::path& dir, const std::vector<NodeType>& types) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec)) continue;
    if (std::none_of(types.begin(), types.end(),
                     [&](const NodeType& t) { return t.name == name; })) {
      std::string known;
      for (const NodeType& t : types) known += (known.empty() ? "" : ", ") + t.name;
      throw InputError(entry.path().string(), "",
                       "node type " + ogb_csv::quoted(name) + " is not in " + kNodeDict +
                           " (types: " + known + ")");
    }
  }
}

// Features (raw/node-feat/<type>/node-feat.csv.gz) of the types that have them, one width for all;
// the other types' rows stay zero.
void read_type_features(const fs::path& raw, const std::vector<NodeType>& types,
                        const std::vector<int64_t>& offset, Graph& g) {
  refuse_unknown_type_folders(raw / "node-feat", types);
  std::string first;  // the first featured type's file
  for (size_t t = 0; t < types.size(); ++t) {
    const fs::path path = raw / "node-feat" / types[t].name / "node-feat.csv.gz";
    std::error_code ec;
    // A type without nodes fixes nothing (its files, if any, are empty).
    if (types[t].count == 0 || !fs::exists(path, ec)) continue;
    GraphSlice part;
    ogb_csv::read_features(path.string(), types[t].count, {0, types[t].count}, part, kNodeDict);
    if (first.empty()) {
      first = path.string();
      g.feat_dim = part.feat_dim;
      g.features.assign(static_cast<size_t>(g.num_nodes * g.feat_dim), 0.0f);
    } else if (part.feat_dim != g.feat_dim && types[t].count > 0) {
      throw InputError(path.string(), "line 1",
                       "has " + std::to_string(part.feat_dim) + " columns, but " + first + " has " +
                           std::to_string(g.feat_dim) + " (the types' features share one width)");
    }
    std::copy(part.features.begin(), part.features.end(),
              g.features.begin() + offset[t] * g.feat_dim);
  }
  if (first.empty())
    throw InputError((raw / "node-feat").string(), "", "no node type has node-feat.csv.gz");
}

// Labels (raw/node-label/<type>/node-label.csv.gz) of the types that have them, all single-label
// or all multi-label; `labelled[t]` records which. The other types' nodes hold class 0.
void read_type_labels(const fs::path& raw, const std::vector<NodeType>& types,
                      const std::vector<int64_t>& offset, Graph& g, std::vector<char>& labelled) {
  refuse_unknown_type_folders(raw / "node-label", types);
  std::string first;
  std::vector<GraphSlice> parts(types.size());
  for (size_t t = 0; t < types.size(); ++t) {
    const fs::path path = raw / "node-label" / types[t].name / "node-label.csv.gz";
    std::error_code ec;
    // A type without nodes fixes nothing (its files, if any, are empty).
    if (types[t].count == 0 || !fs::exists(path, ec)) continue;
    ogb_csv::read_labels(path.string(), types[t].count, {0, types[t].count}, parts[t], kNodeDict);
    labelled[t] = 1;
    if (first.empty()) {
      first = path.string();
      g.multilabel = parts[t].multilabel;
    } else if (parts[t].multilabel != g.multilabel ||
               (g.multilabel && parts[t].num_classes != g.num_classes)) {
      throw InputError(path.string(), "line 1",
                       "has " + std::to_string(parts[t].multilabel ? parts[t].num_classes : 1) +
                           " label columns, unlike " + first);
    }
    g.num_classes = std::max(g.num_classes, parts[t].num_classes);
  }
  if (first.empty())
    throw InputError((raw / "node-label").string(), "", "no node type has node-label.csv.gz");
  if (g.multilabel) {
    g.multilabels.assign(static_cast<size_t>(g.num_nodes * g.num_classes), 0);
  } else {
    g.labels.assign(static_cast<size_t>(g.num_nodes), 0);
  }
  for (size_t t = 0; t < types.size(); ++t) {
    if (!labelled[t]) continue;
    if (g.multilabel) {
      std::copy(parts[t].multilabels.begin(), parts[t].multilabels.end(),
                g.multilabels.begin() + offset[t] * g.num_classes);
    } else {
      std::copy(parts[t].labels.begin(), parts[t].labels.end(), g.labels.begin() + offset[t]);
    }
  }
}

// split/<name>/<type>/{train,valid,test}.csv.gz for the labelled types that have a folder there.
void read_type_splits(const fs::path& split_dir, const std::vector<NodeType>& types,
                      const std::vector<int64_t>& offset, const std::vector<char>& labelled,
                      Graph& g) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(split_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const int32_t t = type_index(types, name);
    if (entry.is_directory() && t < 0)
      throw InputError(entry.path().string(), "",
                       "is not a node type of " + std::string(kNodeDict));
    if (t >= 0 && !labelled[t])
      throw InputError(entry.path().string(), "",
                       "splits node type " + ogb_csv::quoted(name) +
                           ", which has no raw/node-label/" + name + "/node-label.csv.gz");
  }
  const std::vector<std::string> names = {"train.csv.gz", "valid.csv.gz", "test.csv.gz"};
  std::vector<int64_t>* ids[3] = {&g.train, &g.valid, &g.test};
  for (size_t t = 0; t < types.size(); ++t) {
    const fs::path dir = split_dir / types[t].name;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<char> owner(static_cast<size_t>(types[t].count), 0);
    const std::vector<char> none;
    for (int k = 0; k < 3; ++k) {
      for (int64_t v :
           ogb_csv::read_split((dir / names[k]).string(), types[t].count, {0, types[t].count},
                               owner, static_cast<char>(k + 1), names, none)) {
        ids[k]->push_back(offset[t] + v);
      }
    }
  }
}

// A gzip file written in pieces: lines are formatted into a buffer and compressed a mebibyte at a
// time, at zlib's fastest level (a generated graph's features are most of the bytes; level 6, the
// default, took 47 s for ogbn-mag's shape at 1M nodes).
class GzWriter {
 public:
  explicit GzWriter(const fs::path& path) : path_(path.string()) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) throw InputError(path.parent_path().string(), "", "cannot create: " + ec.message());
    file_ = gzopen(path_.c_str(), "wb1");
    if (file_ == nullptr) throw InputError(path_, "", "cannot create");
  }
  GzWriter(const GzWriter&) = delete;
  GzWriter& operator=(const GzWriter&) = delete;
  ~GzWriter() {
    if (file_ != nullptr) gzclose(file_);
  }
  // One line of fmt's `format` of `args`.
  template <typename... Args>
  void line(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<Args>(args)...);
    buffer_ += '\n';
    if (buffer_.size() >= (size_t{1} << 20)) flush();
  }
  void close() {
    flush();
    const int status = gzclose(file_);
    file_ = nullptr;
    if (status != Z_OK) {
      throw InputError(path_, "",
                       std::string("write failed: ") +
                           (status == Z_ERRNO ? std::strerror(errno) : zError(status)));
    }
  }

 private:
  void flush() {
    if (buffer_.empty()) return;
    if (gzwrite(file_, buffer_.data(), static_cast<unsigned>(buffer_.size())) !=
        static_cast<int>(buffer_.size())) {
      int status = Z_OK;
      const char* zlib = gzerror(file_, &status);
      throw InputError(
          path_, "",
          std::string("write failed: ") + (status == Z_ERRNO ? std::strerror(errno) : zlib));
    }
    buffer_.clear();
  }

  std::string path_;
  gzFile file_ = nullptr;
  std::string buffer_;
};

// The names as folder names and CSV fields: none empty or holding '/', ',' or '___', no type
// twice, no relation twice.
void check_writable_names(const Graph& g, const std::string& dir) {
  for (size_t t = 0; t < g.node_types.size(); ++t) {
    if (bad_name(g.node_types[t]) ||
        std::count(g.node_types.begin(), g.node_types.end(), g.node_types[t]) != 1)
      throw InputError(dir, "node type '" + g.node_types[t] + "'",
                       "cannot be written: a name must be unique, not empty, and hold no '/', ',' "
                       "or '___'");
  }
  for (const Relation& r : g.relations) {
    if (bad_name(r.name) || std::count(g.relations.begin(), g.relations.end(), r) != 1)
      throw InputError(dir, "relation '" + r.name + "'",
                       "cannot be written: a relation must be unique, its name not empty and "
                       "holding no '/', ',' or '___'");
  }
}

void write_hetero_files(const Graph& g, const fs::path& dir) {
  const size_t types = g.node_types.size();
  const auto count = [&](size_t t) { return g.type_offsets[t + 1] - g.type_offsets[t]; };
  const fs::path raw = dir / "raw";
  {
    GzWriter out(raw / kNodeDict);
    std::string names, counts;
    for (size_t t = 0; t < types; ++t) {
      names += (t ? "," : "") + g.node_types[t];
      counts += (t ? "," : "") + std::to_string(count(t));
    }
    out.line("{}", names);
    out.line("{}", counts);
    out.close();
  }
  GzWriter triplets(raw / "triplet-type-list.csv.gz");
  for (size_t r = 0; r < g.relations.size(); ++r) {
    const Relation& rel = g.relations[r];
    const std::string folder =
        g.node_types[rel.src_type] + "___" + rel.name + "___" + g.node_types[rel.dst_type];
    triplets.line("{},{},{}", g.node_types[rel.src_type], rel.name, g.node_types[rel.dst_type]);
    GzWriter edges(raw / "relations" / folder / "edge.csv.gz");
    int64_t n = 0;
    for (int64_t v = 0; v < g.num_nodes; ++v) {
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
        if (g.edge_relation[e] != static_cast<int32_t>(r)) continue;
        edges.line("{},{}", g.indices[e] - g.type_offsets[rel.src_type],
                   v - g.type_offsets[rel.dst_type]);
        ++n;
      }
    }
    edges.close();
    GzWriter edge_count(raw / "relations" / folder / "num-edge-list.csv.gz");
    edge_count.line("{}", n);
    edge_count.close();
  }
  triplets.close();
  // A type's features where any of its rows is not zero; its labels and split where any of its
  // nodes is in the split.
  std::vector<char> labelled(types, 0);
  for (const std::vector<int64_t>* split : {&g.train, &g.valid, &g.test}) {
    for (int64_t v : *split) labelled[g.node_type(v)] = 1;
  }
  for (size_t t = 0; t < types; ++t) {
    const auto first = g.features.begin() + g.type_offsets[t] * g.feat_dim;
    const auto last = g.features.begin() + g.type_offsets[t + 1] * g.feat_dim;
    if (std::any_of(first, last, [](float x) { return x != 0.0f; })) {
      GzWriter feat(raw / "node-feat" / g.node_types[t] / "node-feat.csv.gz");
      for (int64_t v = g.type_offsets[t]; v < g.type_offsets[t + 1]; ++v) {
        const float* row = g.features.data() + v * g.feat_dim;
        feat.line("{}", fmt::join(row, row + g.feat_dim, ","));
      }
      feat.close();
    }
    if (!labelled[t]) continue;
    GzWriter labels(raw / "node-label" / g.node_types[t] / "node-label.csv.gz");
    for (int64_t v = g.type_offsets[t]; v < g.type_offsets[t + 1]; ++v) {
      if (g.multilabel) {
        const uint8_t* row = g.multilabels.data() + v * g.num_classes;
        labels.line("{}", fmt::join(row, row + g.num_classes, ","));
      } else {
        labels.line("{}", g.labels[v]);
      }
    }
    labels.close();
    const char* names[] = {"train.csv.gz", "valid.csv.gz", "test.csv.gz"};
    const std::vector<int64_t>* splits[] = {&g.train, &g.valid, &g.test};
    for (int k = 0; k < 3; ++k) {
      GzWriter ids(dir / "split" / "main" / g.node_types[t] / names[k]);
      for (int64_t v : *splits[k]) {
        if (g.node_type(v) == static_cast<int32_t>(t)) ids.line("{}", v - g.type_offsets[t]);
      }
      ids.close();
    }
  }
}
}  // namespace

bool is_ogb_hetero(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "raw" / kNodeDict, ec);
}

Graph load_ogb_hetero(const fs::path& dir, const std::string& split) {
  const fs::path raw = dir / "raw";
  const std::vector<NodeType> types = read_node_dict((raw / kNodeDict).string());
  Graph g;
  g.name = directory_name(dir);
  g.type_offsets = {0};
  for (const NodeType& t : types) {
    g.node_types.push_back(t.name);
    g.type_offsets.push_back(g.type_offsets.back() + t.count);
  }
  g.num_nodes = g.type_offsets.back();
  g.relations = read_triplets((raw / "triplet-type-list.csv.gz").string(), types);
  Edges edges;
  for (size_t r = 0; r < g.relations.size(); ++r) {
    read_relation(raw, types, g.type_offsets, g.relations[r], static_cast<int32_t>(r), edges);
  }
  Graph structure = Graph::from_edges(g.num_nodes, edges.src, edges.dst, edges.rel);
  g.indptr = std::move(structure.indptr);
  g.indices = std::move(structure.indices);
  g.edge_relation = std::move(structure.edge_relation);
  read_type_features(raw, types, g.type_offsets, g);
  std::vector<char> labelled(types.size(), 0);
  read_type_labels(raw, types, g.type_offsets, g, labelled);
  read_type_splits(dir / "split" / ogb_csv::choose_split(dir, split), types, g.type_offsets,
                   labelled, g);
  return g;
}

void save_ogb_hetero(const Graph& g, const std::string& dir) {
  if (!g.heterogeneous())
    throw InputError(dir, "", g.name + " is homogeneous: write it with save_numpy");
  g.validate(g.name);
  check_writable_names(g, dir);
  write_dir_atomically(dir, [&](const std::string& tmp) { write_hetero_files(g, tmp); });
}

}  // namespace adaqp
