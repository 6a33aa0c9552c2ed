#include "adaqp/partition/partition_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>
#include <algorithm>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "adaqp/common/array_file.h"
#include "adaqp/common/atomic_file.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/common/yaml_document.h"
#include "part_checker.h"
#include "part_features.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

constexpr int kOldestFormatVersion = 1;
// Layout of the "scalars" array of a part file.
enum Scalar { kRank, kNumParts, kGlobalNodes, kNumCentral, kFeatDim, kNumClasses, kMultilabel, kN };

std::string meta_path(const std::string& dir) {
  return (fs::path(dir) / "meta.yaml").string();
}
std::string part_path(const std::string& dir, int r) {
  return (fs::path(dir) / fmt::format("part-{}", r) / "part.bin").string();
}

}  // namespace

PartCounts count_part(const Part& p) {
  PartCounts c;
  c.owned = p.num_owned();
  c.central = p.num_central;
  c.marginal = p.num_marginal();
  c.halo = p.num_halo();
  c.local_in_edges = p.num_local_edges();
  c.in_edges = p.num_local_edges() + p.num_halo_edges();
  c.sent_rows = static_cast<int64_t>(p.send_idx.size());
  c.train = static_cast<int64_t>(p.train_idx.size());
  return c;
}

void write_part_file(const Part& p, const std::string& dataset_fingerprint,
                     const std::string& path) {
  // The part's arrays are written from where they are: no second copy of its features.
  ArrayFileWriter w;
  std::vector<int64_t> scalars(kN);
  scalars[kRank] = p.rank;
  scalars[kNumParts] = p.num_parts;
  scalars[kGlobalNodes] = p.global_num_nodes;
  scalars[kNumCentral] = p.num_central;
  scalars[kFeatDim] = p.feat_dim;
  scalars[kNumClasses] = p.num_classes;
  scalars[kMultilabel] = p.multilabel ? 1 : 0;
  w.add("scalars", std::move(scalars));
  w.add_view("owned_gid", p.owned_gid);
  w.add_view("halo_gid", p.halo_gid);
  w.add_view("halo_offsets", p.halo_offsets);
  w.add_view("local_indptr", p.local_indptr);
  w.add_view("local_indices", p.local_indices);
  w.add_view("halo_indptr", p.halo_indptr);
  w.add_view("halo_indices", p.halo_indices);
  if (p.heterogeneous()) {
    w.add_view("local_relations", p.local_relations);
    w.add_view("halo_relations", p.halo_relations);
    w.add_view("owned_type", p.owned_type);
    w.add_view("halo_type", p.halo_type);
  }
  w.add_view("owned_in_degree", p.owned_in_degree);
  w.add_view("owned_out_degree", p.owned_out_degree);
  w.add_view("halo_in_degree", p.halo_in_degree);
  w.add_view("halo_out_degree", p.halo_out_degree);
  w.add_view("send_offsets", p.send_offsets);
  w.add_view("send_idx", p.send_idx);
  add_part_features(w, p);
  w.add_view("labels", p.labels);
  w.add_view("multilabels", p.multilabels);
  w.add_view("global_split_counts", p.global_split_counts);
  w.add_view("train_idx", p.train_idx);
  w.add_view("valid_idx", p.valid_idx);
  w.add_view("test_idx", p.test_idx);
  // Last: the arrays before it keep their places in files written before it was.
  w.add("dataset_fingerprint",
        std::vector<uint8_t>(dataset_fingerprint.begin(), dataset_fingerprint.end()));
  w.write(path);
}

namespace {

// meta.yaml's `dataset` map names the keys without their section.
constexpr const char* kDatasetPrefix = "dataset.";

std::string without_dataset_prefix(const std::string& key) {
  const std::string prefix = kDatasetPrefix;
  return key.rfind(prefix, 0) == 0 ? key.substr(prefix.size()) : key;
}

}  // namespace

std::string partition_meta_yaml(const PartitionMeta& m) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "format_version" << YAML::Value << m.format_version;
  out << YAML::Key << "dataset_name" << YAML::Value << m.dataset_name;
  out << YAML::Key << "dataset_fingerprint" << YAML::Value << m.dataset_fingerprint;
  out << YAML::Key << "method" << YAML::Value << m.method;
  out << YAML::Key << "seed" << YAML::Value << m.seed;
  if (m.sample_degree != 0) out << YAML::Key << "sample_degree" << YAML::Value << m.sample_degree;
  if (m.balance_train) out << YAML::Key << "balance_train" << YAML::Value << true;
  if (m.balance_edges) out << YAML::Key << "balance_edges" << YAML::Value << true;
  if (m.balance_types) out << YAML::Key << "balance_types" << YAML::Value << true;
  if (!m.dataset_keys.empty()) {
    out << YAML::Key << "dataset" << YAML::Value << YAML::BeginMap;
    for (const auto& [key, value] : m.dataset_keys)
      out << YAML::Key << without_dataset_prefix(key) << YAML::Value << value;
    out << YAML::EndMap;
  }
  if (!m.dataset_files.empty()) {
    out << YAML::Key << "dataset_files" << YAML::Value << YAML::BeginSeq;
    for (const DatasetFile& f : m.dataset_files) {
      out << YAML::Flow << YAML::BeginSeq << f.path << f.bytes << fmt::format("{:08x}", f.ends_crc)
          << YAML::EndSeq;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "parts" << YAML::Value << m.parts;
  out << YAML::Key << "num_nodes" << YAML::Value << m.num_nodes;
  out << YAML::Key << "num_edges" << YAML::Value << m.num_edges;
  out << YAML::Key << "feat_dim" << YAML::Value << m.feat_dim;
  out << YAML::Key << "num_classes" << YAML::Value << m.num_classes;
  out << YAML::Key << "multilabel" << YAML::Value << m.multilabel;
  out << YAML::Key << "edge_cut" << YAML::Value << m.edge_cut;
  if (!m.node_types.empty()) {
    out << YAML::Key << "node_types" << YAML::Value << YAML::Flow << m.node_types;
    out << YAML::Key << "relations" << YAML::Value << YAML::BeginSeq;
    for (const Relation& r : m.relations) {
      out << YAML::Flow << YAML::BeginSeq << m.node_types[r.src_type] << r.name
          << m.node_types[r.dst_type] << YAML::EndSeq;
    }
    out << YAML::EndSeq;
  }
  out << YAML::Key << "counts" << YAML::Value << YAML::BeginSeq;
  for (const PartCounts& c : m.counts) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "owned" << YAML::Value << c.owned;
    out << YAML::Key << "central" << YAML::Value << c.central;
    out << YAML::Key << "marginal" << YAML::Value << c.marginal;
    out << YAML::Key << "halo" << YAML::Value << c.halo;
    out << YAML::Key << "in_edges" << YAML::Value << c.in_edges;
    out << YAML::Key << "local_in_edges" << YAML::Value << c.local_in_edges;
    out << YAML::Key << "sent_rows" << YAML::Value << c.sent_rows;
    out << YAML::Key << "train" << YAML::Value << c.train;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

namespace {

template <typename T>
T field(const YAML::Node& node, const std::string& key, const std::string& file,
        const std::string& where = "") {
  const std::string at = where.empty() ? key : where + "." + key;
  const YAML::Node v = node[key];
  if (!v) throw InputError(file, at, "missing");
  try {
    return v.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError(file, at, "invalid value '" + YAML::Dump(v) + "'");
  }
}

// YAML allows no key twice in one mapping, and yaml-cpp would read the first silently.
void refuse_repeated_keys(const YAML::Node& node, const std::string& file, const std::string& at) {
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      refuse_repeated_keys(node[i], file, fmt::format("{}[{}]", at, i));
  }
  if (!node.IsMap()) return;
  std::vector<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : YAML::Dump(kv.first);
    const std::string path = at.empty() ? key : at + "." + key;
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw InputError(file, path, "appears twice");
    seen.push_back(key);
    refuse_repeated_keys(kv.second, file, path);
  }
}

// The counts of meta.yaml against each other: what a partition this build writes always holds,
// so that a damaged or edited file is named here, not met as nonsense (or an overflow) later.
void check_meta_counts(const PartitionMeta& m, const std::string& file) {
  const auto require = [&](bool ok, const std::string& at, int64_t value, const std::string& rule) {
    if (!ok) throw InputError(file, at, fmt::format("is {}: {}", value, rule));
  };
  require(m.num_nodes >= 0, "num_nodes", m.num_nodes, "must be >= 0");
  require(m.num_edges >= 0, "num_edges", m.num_edges, "must be >= 0");
  // Feature columns are int32 in part files (part_features.h); below 2^31 columns a part's rows x
  // feat_dim cannot overflow for any rows count a readable file holds.
  require(m.feat_dim >= 0 && m.feat_dim <= INT32_MAX, "feat_dim", m.feat_dim,
          fmt::format("must be in [0, {}]", INT32_MAX));
  require(m.num_classes >= (m.num_nodes > 0 ? 1 : 0), "num_classes", m.num_classes,
          "must be >= 1 for a graph with nodes");
  require(m.edge_cut >= 0 && m.edge_cut <= m.num_edges, "edge_cut", m.edge_cut,
          fmt::format("must be in [0, num_edges = {}]", m.num_edges));
  int64_t owned = 0, in_edges = 0;
  for (size_t r = 0; r < m.counts.size(); ++r) {
    const PartCounts& c = m.counts[r];
    const std::string at = fmt::format("counts[{}].", r);
    require(c.owned >= 0 && c.owned <= m.num_nodes, at + "owned", c.owned,
            fmt::format("must be in [0, num_nodes = {}]", m.num_nodes));
    require(c.central >= 0 && c.marginal >= 0 && c.central + c.marginal == c.owned, at + "central",
            c.central,
            fmt::format("central and marginal ({}) must be >= 0 and sum to owned ({})", c.marginal,
                        c.owned));
    require(c.halo >= 0 && c.halo <= m.num_nodes - c.owned, at + "halo", c.halo,
            fmt::format("must be in [0, num_nodes - owned = {}]", m.num_nodes - c.owned));
    require(c.in_edges >= 0 && c.in_edges <= m.num_edges, at + "in_edges", c.in_edges,
            fmt::format("must be in [0, num_edges = {}]", m.num_edges));
    require(c.local_in_edges >= 0 && c.local_in_edges <= c.in_edges, at + "local_in_edges",
            c.local_in_edges, fmt::format("must be in [0, in_edges = {}]", c.in_edges));
    require(c.sent_rows >= 0, at + "sent_rows", c.sent_rows, "must be >= 0");
    require(c.train >= 0 && c.train <= c.owned, at + "train", c.train,
            fmt::format("must be in [0, owned = {}]", c.owned));
    owned += c.owned;
    in_edges += c.in_edges;
  }
  require(owned == m.num_nodes, "counts", owned,
          fmt::format("nodes owned in all, must be num_nodes = {}", m.num_nodes));
  require(in_edges == m.num_edges, "counts", in_edges,
          fmt::format("in-edges in all, must be num_edges = {}", m.num_edges));
  int64_t cut = 0;
  for (const PartCounts& c : m.counts) cut += c.in_edges - c.local_in_edges;
  require(m.edge_cut == cut, "edge_cut", m.edge_cut,
          fmt::format("must be the parts' in-edges from other parts, {}", cut));
}

// meta.yaml's dataset_files: [path, bytes, CRC-32 of the ends in hex] each (absent: none), read
// entry by entry, so that an error names the entry rather than printing the whole list.
void read_meta_dataset_files(const YAML::Node& root, const std::string& file, PartitionMeta& m) {
  const YAML::Node list = root["dataset_files"];
  if (!list) return;
  if (!list.IsSequence())
    throw InputError(file, "dataset_files", "must be a list of [path, bytes, CRC-32 in hex]");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("dataset_files[{}]", i);
    std::vector<std::string> row;
    try {
      row = list[i].as<std::vector<std::string>>();
    } catch (const YAML::Exception&) {
      row.clear();  // not a list of scalars: refused below
    }
    if (row.size() != 3) throw InputError(file, at, "must be [path, bytes, CRC-32 in hex]");
    DatasetFile f;
    f.path = row[0];
    try {
      size_t used = 0;
      f.bytes = std::stoll(row[1], &used);
      if (used != row[1].size() || f.bytes < 0) throw std::invalid_argument("bytes");
      const unsigned long crc = std::stoul(row[2], &used, 16);
      if (used != row[2].size() || crc > 0xFFFFFFFFul) throw std::invalid_argument("crc");
      f.ends_crc = static_cast<uint32_t>(crc);
    } catch (const std::exception&) {
      throw InputError(file, at,
                       fmt::format("'{}', '{}': not a size and a CRC-32 in hex", row[1], row[2]));
    }
    m.dataset_files.push_back(std::move(f));
  }
}

// meta.yaml's node_types and relations (a heterogeneous dataset's; both or neither).
void read_meta_types(const YAML::Node& root, const std::string& file, PartitionMeta& m) {
  if (!root["node_types"] && !root["relations"]) return;
  m.node_types = field<std::vector<std::string>>(root, "node_types", file);
  for (const std::string& t : m.node_types) {
    if (std::count(m.node_types.begin(), m.node_types.end(), t) != 1)
      throw InputError(file, "node_types", "names '" + t + "' twice");
  }
  const auto names = field<std::vector<std::vector<std::string>>>(root, "relations", file);
  const auto type_of = [&](const std::string& name, size_t r) {
    const auto it = std::find(m.node_types.begin(), m.node_types.end(), name);
    if (it == m.node_types.end())
      throw InputError(file, fmt::format("relations[{}]", r),
                       "names node type '" + name + "', which node_types does not list");
    return static_cast<int32_t>(it - m.node_types.begin());
  };
  for (size_t r = 0; r < names.size(); ++r) {
    if (names[r].size() != 3)
      throw InputError(file, fmt::format("relations[{}]", r),
                       "must be [source type, name, target type]");
    m.relations.push_back({type_of(names[r][0], r), names[r][1], type_of(names[r][2], r)});
  }
  if (m.node_types.empty() || m.relations.empty())
    throw InputError(file, "node_types", "a heterogeneous partition lists types and relations");
}

// Removes a temporary directory unless the work in it was committed.
class TempDirGuard {
 public:
  explicit TempDirGuard(fs::path p) : path_(std::move(p)) {}
  ~TempDirGuard() {
    if (!committed_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  TempDirGuard(const TempDirGuard&) = delete;
  TempDirGuard& operator=(const TempDirGuard&) = delete;
  void commit() { committed_ = true; }

 private:
  fs::path path_;
  bool committed_ = false;
};

// The type and relation ids of a heterogeneous partition's part: one per edge and node, each
// naming one of meta.yaml's; a homogeneous partition's parts have none.
void read_part_types(ArrayFileReader& in, const PartChecker& check, const PartitionMeta& meta,
                     Part& p) {
  const char* arrays[] = {"local_relations", "halo_relations", "owned_type", "halo_type"};
  if (meta.node_types.empty()) {
    for (const char* a : arrays) {
      check.require(!in.has(a), a, "present, but meta.yaml names no node types");
    }
    return;
  }
  p.local_relations = in.take<int32_t>("local_relations");
  p.halo_relations = in.take<int32_t>("halo_relations");
  p.owned_type = in.take<int32_t>("owned_type");
  p.halo_type = in.take<int32_t>("halo_type");
  check.size("local_relations", p.local_relations.size(), p.local_indices.size());
  check.size("halo_relations", p.halo_relations.size(), p.halo_indices.size());
  check.size("owned_type", p.owned_type.size(), p.owned_gid.size());
  check.size("halo_type", p.halo_type.size(), p.halo_gid.size());
  const auto relations = static_cast<int64_t>(meta.relations.size());
  const auto types = static_cast<int64_t>(meta.node_types.size());
  p.num_relations = static_cast<int32_t>(relations);
  p.num_node_types = static_cast<int32_t>(types);
  check.in_range("local_relations", p.local_relations, relations);
  check.in_range("halo_relations", p.halo_relations, relations);
  check.in_range("owned_type", p.owned_type, types);
  check.in_range("halo_type", p.halo_type, types);
}

Part read_part_file(const std::string& path, int rank, const PartitionMeta& meta) {
  ArrayFileReader in(path);
  const PartChecker check(path);
  const std::vector<int64_t> s = in.take<int64_t>("scalars");
  check.size("scalars", s.size(), kN);
  check.require(s[kRank] == rank, "scalars", fmt::format("holds rank {}, not {}", s[kRank], rank));
  const struct {
    const char* key;  // in meta.yaml
    int64_t part, meta;
  } agree[] = {{"parts", s[kNumParts], meta.parts},
               {"num_nodes", s[kGlobalNodes], meta.num_nodes},
               {"feat_dim", s[kFeatDim], meta.feat_dim},
               {"num_classes", s[kNumClasses], meta.num_classes},
               {"multilabel", s[kMultilabel] != 0, meta.multilabel}};
  for (const auto& a : agree) {
    check.require(a.part == a.meta, "scalars",
                  fmt::format("{} is {} here, {} in meta.yaml", a.key, a.part, a.meta));
  }
  // Parts written before the fingerprint was recorded in them have none to compare.
  if (in.has("dataset_fingerprint")) {
    const std::vector<uint8_t> bytes = in.take<uint8_t>("dataset_fingerprint");
    const std::string fingerprint(bytes.begin(), bytes.end());
    const bool text =
        std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b >= 0x20 && b < 0x7f; });
    check.require(text, "dataset_fingerprint",
                  fmt::format("holds {} bytes that are not text", bytes.size()));
    check.require(fingerprint == meta.dataset_fingerprint, "dataset_fingerprint",
                  fmt::format("is {} but {} in meta.yaml: a part made from another dataset",
                              fingerprint, meta.dataset_fingerprint));
  }
  Part p;
  p.rank = rank;
  p.num_parts = meta.parts;
  p.global_num_nodes = meta.num_nodes;
  p.num_central = s[kNumCentral];
  p.feat_dim = meta.feat_dim;
  p.num_classes = meta.num_classes;
  p.multilabel = meta.multilabel;

  p.owned_gid = in.take<int64_t>("owned_gid");
  const int64_t owned = p.num_owned();
  check.size("owned_gid", p.owned_gid.size(), meta.counts[rank].owned);
  check.in_range("owned_gid", p.owned_gid, meta.num_nodes);
  check.require(p.num_central >= 0 && p.num_central <= owned, "scalars", "bad central count");
  p.halo_gid = in.take<int64_t>("halo_gid");
  check.in_range("halo_gid", p.halo_gid, meta.num_nodes);
  check.distinct_nodes(p.owned_gid, p.halo_gid, meta.num_nodes);
  p.halo_offsets = in.take<int64_t>("halo_offsets");
  check.offsets("halo_offsets", p.halo_offsets, meta.parts, p.num_halo());
  check.require(p.halo_count_from(rank) == 0, "halo_offsets", "lists halo nodes of its own rank");

  p.local_indptr = in.take<int64_t>("local_indptr");
  p.local_indices = in.take<int32_t>("local_indices");
  check.offsets("local_indptr", p.local_indptr, owned, p.num_local_edges());
  check.in_range("local_indices", p.local_indices, owned);
  p.halo_indptr = in.take<int64_t>("halo_indptr");
  p.halo_indices = in.take<int32_t>("halo_indices");
  check.offsets("halo_indptr", p.halo_indptr, owned, p.num_halo_edges());
  check.in_range("halo_indices", p.halo_indices, p.num_halo());
  check.require(p.halo_indptr[p.num_central] == 0, "halo_indptr", "central rows have halo edges");
  read_part_types(in, check, meta, p);

  p.owned_in_degree = in.take<int64_t>("owned_in_degree");
  p.owned_out_degree = in.take<int64_t>("owned_out_degree");
  p.halo_in_degree = in.take<int64_t>("halo_in_degree");
  p.halo_out_degree = in.take<int64_t>("halo_out_degree");
  check.size("owned_in_degree", p.owned_in_degree.size(), owned);
  check.size("owned_out_degree", p.owned_out_degree.size(), owned);
  check.size("halo_in_degree", p.halo_in_degree.size(), p.num_halo());
  check.size("halo_out_degree", p.halo_out_degree.size(), p.num_halo());
  for (const auto& [name, degrees] : {std::pair{"owned_in_degree", &p.owned_in_degree},
                                      {"owned_out_degree", &p.owned_out_degree},
                                      {"halo_in_degree", &p.halo_in_degree},
                                      {"halo_out_degree", &p.halo_out_degree}}) {
    check.non_negative(name, *degrees);
    for (size_t i = 0; i < degrees->size(); ++i) {
      if ((*degrees)[i] > meta.num_edges)
        check.fail(name, fmt::format("entry {} is {}, more than num_edges = {}", i, (*degrees)[i],
                                     meta.num_edges));
    }
  }
  // Every in-edge of an owned node is in its part: its in-degree is its row's entries.
  for (int64_t i = 0; i < owned; ++i) {
    const int64_t entries =
        p.local_indptr[i + 1] - p.local_indptr[i] + p.halo_indptr[i + 1] - p.halo_indptr[i];
    if (p.owned_in_degree[i] != entries)
      check.fail("owned_in_degree",
                 fmt::format("entry {} is {}, but the node's row holds {} in-edges", i,
                             p.owned_in_degree[i], entries));
  }

  p.send_offsets = in.take<int64_t>("send_offsets");
  p.send_idx = in.take<int64_t>("send_idx");
  check.offsets("send_offsets", p.send_offsets, meta.parts,
                static_cast<int64_t>(p.send_idx.size()));
  check.in_range("send_idx", p.send_idx, owned);
  check.sent_once("send_idx", p.send_offsets, p.send_idx, owned, rank);

  read_part_features(in, check, p);
  p.labels = in.take<int64_t>("labels");
  p.multilabels = in.take<uint8_t>("multilabels");
  check.size("labels", p.labels.size(), p.multilabel ? 0 : owned);
  check.in_range("labels", p.labels, p.num_classes);
  check.size("multilabels", p.multilabels.size(), p.multilabel ? owned * p.num_classes : 0);
  p.global_split_counts = in.take<int64_t>("global_split_counts");
  check.size("global_split_counts", p.global_split_counts.size(), 3);
  p.train_idx = in.take<int64_t>("train_idx");
  p.valid_idx = in.take<int64_t>("valid_idx");
  p.test_idx = in.take<int64_t>("test_idx");
  check.in_range("train_idx", p.train_idx, owned);
  check.in_range("valid_idx", p.valid_idx, owned);
  check.in_range("test_idx", p.test_idx, owned);
  // Each node in one split at most: ascending lists, and no node in two of them.
  check.ascending("train_idx", p.train_idx);
  check.ascending("valid_idx", p.valid_idx);
  check.ascending("test_idx", p.test_idx);
  std::vector<char> in_split(static_cast<size_t>(owned), 0);
  for (const auto& [name, split] : {std::pair{"train_idx", &p.train_idx},
                                    {"valid_idx", &p.valid_idx},
                                    {"test_idx", &p.test_idx}}) {
    for (const int64_t v : *split) {
      if (in_split[v] != 0) check.fail(name, fmt::format("node {} is in another split too", v));
      in_split[v] = 1;
    }
  }
  // meta.yaml's line for this part is what the part holds (info reports it without reading it).
  const PartCounts held = count_part(p), said = meta.counts[static_cast<size_t>(rank)];
  const struct {
    const char* key;
    const char* array;  // where the part holds it
    int64_t held, said;
  } fields[] = {{"central", "scalars", held.central, said.central},
                {"halo", "halo_gid", held.halo, said.halo},
                {"local_in_edges", "local_indices", held.local_in_edges, said.local_in_edges},
                {"in_edges", "halo_indices", held.in_edges, said.in_edges},
                {"sent_rows", "send_idx", held.sent_rows, said.sent_rows},
                {"train", "train_idx", held.train, said.train}};
  for (const auto& f : fields) {
    if (f.held != f.said)
      check.fail(f.array, fmt::format("makes {} {}, but meta.yaml's counts[{}].{} says {}", f.held,
                                      f.key, rank, f.key, f.said));
  }
  // Every array was taken: one left is no part's (array names are outside the checksums, and a
  // damaged name would hide an optional array's check, the dataset's fingerprint).
  const auto left = in.arrays();
  if (!left.empty()) check.fail(left.front().first, "not an array a part holds");
  return p;
}

}  // namespace

PartitionMeta write_partition(const std::string& dir, const Graph& g, const PartitionOptions& opt) {
  const fs::path target = directory_path(dir);
  if (fs::exists(target))
    throw InputError(dir, "", "already exists; remove it or choose another partition directory");
  remove_stale_temporaries(target.parent_path().string(),
                           target.filename().string() + AtomicFile::kTempInfix);
  const fs::path tmp = temp_path(target.string());
  std::error_code ec;
  TempDirGuard guard(tmp);
  fs::create_directories(tmp, ec);
  if (ec) {
    throw InputError(dir, "",
                     "cannot create the partition directory: " + ec.message() +
                         " (it is written first as " + tmp.filename().string() + " beside it)");
  }

  double t0 = steady_now_s();
  const std::vector<int32_t> owner = assign_parts(g, opt);
  PartitionMeta meta;
  meta.dataset_name = g.name;
  meta.dataset_fingerprint = fingerprint(g);
  meta.method = to_string(opt.method);
  meta.seed = opt.seed;
  meta.sample_degree = opt.sample_degree;
  meta.balance_train = opt.balance_train;
  meta.balance_edges = opt.balance_edges;
  meta.balance_types = opt.balance_types;
  meta.dataset_keys = opt.dataset_keys;
  if (opt.dataset_files) meta.dataset_files = *opt.dataset_files;
  meta.parts = opt.parts;
  meta.num_nodes = g.num_nodes;
  meta.num_edges = g.num_edges();
  meta.feat_dim = g.feat_dim;
  meta.num_classes = g.num_classes;
  meta.multilabel = g.multilabel;
  meta.node_types = g.node_types;
  meta.relations = g.relations;
  meta.edge_cut = edge_cut(g, owner);
  spdlog::info("partition: {} into {} parts in {:.3f} s, edge cut {} of {} edges",
               to_string(opt.method), opt.parts, steady_now_s() - t0, meta.edge_cut,
               meta.num_edges);

  t0 = steady_now_s();
  for (int r = 0; r < opt.parts; ++r) {
    const Part p = build_part(g, owner, r);
    meta.counts.push_back(count_part(p));
    const fs::path part_dir = fs::path(part_path(tmp.string(), r)).parent_path();
    fs::create_directories(part_dir, ec);
    if (ec) throw InputError(part_dir.string(), "", "cannot create directory: " + ec.message());
    write_part_file(p, meta.dataset_fingerprint, part_path(tmp.string(), r));
  }
  AtomicFile::write_text(meta_path(tmp.string()), partition_meta_yaml(meta));
  spdlog::info("partition: built and wrote {} parts in {:.3f} s", opt.parts, steady_now_s() - t0);

  fs::rename(tmp, target, ec);
  if (ec && fs::exists(target)) {
    throw InputError(dir, "",
                     "another process made this partition directory while this one was writing "
                     "its own (two jobs partitioning into one partition.dir at once); run the job "
                     "again to use the one there");
  }
  if (ec)
    throw InputError(dir, "", "cannot move the finished partition into place: " + ec.message());
  guard.commit();
  return meta;
}

PartitionMeta replace_partition(const std::string& dir, const Graph& g,
                                const PartitionOptions& opt) {
  const fs::path target = directory_path(dir);
  if (!fs::is_directory(target)) throw InputError(dir, "", "not a directory: nothing to replace");
  // The new partition is written beside it under a temporary name, then the two are swapped.
  remove_stale_temporaries(target.parent_path().string(),
                           target.filename().string() + AtomicFile::kTempInfix);
  const fs::path fresh = temp_path(target.string());
  std::error_code ec;
  PartitionMeta meta = write_partition(fresh.string(), g, opt);
  if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0) {
    const int err = errno;
    fs::remove_all(fresh, ec);
    throw InputError(dir, "",
                     fmt::format("cannot swap in the new partition: {}", std::strerror(err)));
  }
  fs::remove_all(fresh, ec);  // the old partition, now under the temporary name
  if (ec)
    spdlog::warn("partition: could not remove the old partition {}: {}", fresh.string(),
                 ec.message());
  return meta;
}

namespace {

// One directory by two names (a symbolic link, a bind mount), both there: the same dataset.
bool same_directory(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

}  // namespace

void require_partition_matches(const PartitionMeta& meta, const PartitionOptions& opt,
                               const std::string& dir) {
  auto refuse_key = [&](const std::string& key, const std::string& made, const std::string& asked) {
    throw ConfigError(
        fmt::format("partition {} was made with {} = {}, the job asks for {}: choose another "
                    "partition.dir, or pass --repartition to adaqp train to replace it",
                    dir, key, made, asked));
  };
  auto refuse = [&](const std::string& key, const std::string& made, const std::string& asked) {
    refuse_key("partition." + key, made, asked);
  };
  // The data first: a partition of another graph is the worst mix-up. Directories written before
  // the dataset keys were recorded have none to compare; a key added since is its default there.
  if (!meta.dataset_keys.empty()) {
    for (const auto& pair : opt.dataset_keys) {
      // Named references: C++17 lambdas may not capture structured bindings (clang refuses).
      const std::string& key = pair.first;
      const std::string& asked = pair.second;
      const auto made = std::find_if(meta.dataset_keys.begin(), meta.dataset_keys.end(),
                                     [&](const auto& kv) { return kv.first == key; });
      std::string made_value = "(unset)";
      if (made != meta.dataset_keys.end()) {
        made_value = made->second;
      } else {
        const auto fallback =
            std::find_if(opt.dataset_key_defaults.begin(), opt.dataset_key_defaults.end(),
                         [&](const auto& kv) { return kv.first == key; });
        if (fallback != opt.dataset_key_defaults.end()) made_value = fallback->second;
      }
      if (made_value != asked && !(key == "dataset.path" && same_directory(made_value, asked)))
        refuse_key(key, "'" + made_value + "'", "'" + asked + "'");
    }
  }
  // The same keys can name files that changed since (a dataset rewritten in place).
  if (!meta.dataset_files.empty() && opt.dataset_files) {
    const std::string changed = changed_dataset_file(meta.dataset_files, *opt.dataset_files);
    if (!changed.empty()) {
      throw ConfigError(fmt::format(
          "partition {} was made from other dataset files: {}; the dataset changed since it was "
          "partitioned: choose another partition.dir, or pass --repartition to adaqp train to "
          "replace it",
          dir, changed));
    }
  } else if (!meta.dataset_files.empty()) {
    spdlog::info(
        "partition {}: the dataset's files are not listed here (no dataset.path directory, or "
        "more than {} files), so the {} it recorded are not compared; the partition is used as "
        "it was made",
        dir, kMaxDatasetFiles, meta.dataset_files.size());
  }
  const std::string method = to_string(opt.method);
  if (meta.method != method) refuse("method", meta.method, method);
  if (meta.parts != opt.parts)
    refuse("parts", std::to_string(meta.parts), std::to_string(opt.parts));
  const bool metis = opt.method == PartitionMethod::kMetis;
  const bool sampled = metis || opt.method == PartitionMethod::kPtscotch;
  if (opt.method != PartitionMethod::kContiguous && meta.seed != opt.seed)
    refuse("seed", std::to_string(meta.seed), std::to_string(opt.seed));
  if (sampled && meta.sample_degree != opt.sample_degree)
    refuse("sample_degree", std::to_string(meta.sample_degree), std::to_string(opt.sample_degree));
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  if (metis && meta.balance_train != opt.balance_train)
    refuse("balance_train", flag(meta.balance_train), flag(opt.balance_train));
  if (metis && meta.balance_edges != opt.balance_edges)
    refuse("balance_edges", flag(meta.balance_edges), flag(opt.balance_edges));
  if (metis && meta.balance_types != opt.balance_types)
    refuse("balance_types", flag(meta.balance_types), flag(opt.balance_types));
}

std::string partition_meta_path(const std::string& dir) {
  return meta_path(dir);
}

std::string partition_part_path(const std::string& dir, int rank) {
  return part_path(dir, rank);
}

std::string read_partition_meta_text(const std::string& dir) {
  const std::string file = meta_path(dir);
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int error = errno;
    std::error_code ec;
    if (fs::exists(file, ec))
      throw InputError(file, "", std::string("cannot read: ") + std::strerror(error));
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw InputError(dir, "", "is not a directory: not a partition directory");
    throw InputError(file, "", "missing: not a partition directory");
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(file, "", "read failed");
  return text;
}

PartitionMeta read_partition_meta(const std::string& dir) {
  return parse_partition_meta(read_partition_meta_text(dir), meta_path(dir));
}

PartitionMeta parse_partition_meta(const std::string& text, const std::string& file) {
  const YamlDocument doc = parse_yaml_document(text);
  if (!doc.error.empty()) throw InputError(file, "", doc.error);
  const YAML::Node& root = doc.root;
  if (!root.IsMap()) throw InputError(file, "", "expected a mapping");
  refuse_repeated_keys(root, file, "");
  PartitionMeta m;
  m.format_version = field<int>(root, "format_version", file);
  if (m.format_version < kOldestFormatVersion || m.format_version > kPartitionFormatVersion)
    throw InputError(
        file, "format_version",
        fmt::format("is {}, this build reads versions {} to {}; re-run adaqp partition",
                    m.format_version, kOldestFormatVersion, kPartitionFormatVersion));
  m.dataset_name = field<std::string>(root, "dataset_name", file);
  m.dataset_fingerprint = field<std::string>(root, "dataset_fingerprint", file);
  // What graph.h's fingerprint() writes: 32 lowercase hex digits (checkpoints carry it on).
  const bool hex =
      std::all_of(m.dataset_fingerprint.begin(), m.dataset_fingerprint.end(),
                  [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (m.dataset_fingerprint.size() != 32 || !hex)
    throw InputError(file, "dataset_fingerprint",
                     fmt::format("is '{}': expected 32 hex digits", m.dataset_fingerprint));
  m.method = field<std::string>(root, "method", file);
  m.seed = field<uint64_t>(root, "seed", file);
  if (root["sample_degree"]) m.sample_degree = field<int64_t>(root, "sample_degree", file);
  if (root["balance_train"]) m.balance_train = field<bool>(root, "balance_train", file);
  if (root["balance_edges"]) m.balance_edges = field<bool>(root, "balance_edges", file);
  if (root["balance_types"]) m.balance_types = field<bool>(root, "balance_types", file);
  if (const YAML::Node keys = root["dataset"]) {
    if (!keys.IsMap()) throw InputError(file, "dataset", "must be a mapping of dataset keys");
    for (const auto& kv : keys) {
      if (!kv.first.IsScalar()) throw InputError(file, "dataset", "keys must be names");
      const std::string key = kv.first.Scalar();
      m.dataset_keys.emplace_back(kDatasetPrefix + key,
                                  field<std::string>(keys, key, file, "dataset"));
    }
  }
  m.parts = field<int>(root, "parts", file);
  m.num_nodes = field<int64_t>(root, "num_nodes", file);
  m.num_edges = field<int64_t>(root, "num_edges", file);
  m.feat_dim = field<int64_t>(root, "feat_dim", file);
  m.num_classes = field<int64_t>(root, "num_classes", file);
  m.multilabel = field<bool>(root, "multilabel", file);
  m.edge_cut = field<int64_t>(root, "edge_cut", file);
  if (m.parts < 1) throw InputError(file, "parts", fmt::format("must be >= 1, got {}", m.parts));
  read_meta_types(root, file, m);
  read_meta_dataset_files(root, file, m);
  const YAML::Node counts = root["counts"];
  if (!counts || !counts.IsSequence() || static_cast<int>(counts.size()) != m.parts)
    throw InputError(file, "counts", fmt::format("must be a list of {} entries", m.parts));
  for (int r = 0; r < m.parts; ++r) {
    const std::string at = fmt::format("counts[{}]", r);
    const YAML::Node c = counts[r];
    PartCounts pc;
    pc.owned = field<int64_t>(c, "owned", file, at);
    pc.central = field<int64_t>(c, "central", file, at);
    pc.marginal = field<int64_t>(c, "marginal", file, at);
    pc.halo = field<int64_t>(c, "halo", file, at);
    pc.in_edges = field<int64_t>(c, "in_edges", file, at);
    pc.local_in_edges = field<int64_t>(c, "local_in_edges", file, at);
    pc.sent_rows = field<int64_t>(c, "sent_rows", file, at);
    pc.train = field<int64_t>(c, "train", file, at);
    m.counts.push_back(pc);
  }
  check_meta_counts(m, file);
  return m;
}

Part load_part(const std::string& dir, int rank, int expected_parts) {
  const PartitionMeta meta = read_partition_meta(dir);
  return load_part(dir, rank, meta, expected_parts);
}

Part load_part(const std::string& dir, int rank, const PartitionMeta& meta, int expected_parts) {
  const std::string file = meta_path(dir);
  if (meta.parts != expected_parts)
    throw InputError(file, "parts",
                     fmt::format("partition {} has {} parts but the job runs {} workers", dir,
                                 meta.parts, expected_parts));
  ADAQP_CHECK(rank >= 0 && rank < meta.parts, "rank within the partition");
  return read_part_file(part_path(dir, rank), rank, meta);
}

}  // namespace adaqp
