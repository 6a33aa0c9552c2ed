// The GraphSAINT layout (Zeng et al., ICLR 2020), in which the AdaQP reference reads Reddit, Yelp,
// Flickr and AmazonProducts: a SciPy CSR adjacency in a .npz archive (npz_reader.h), features in
// .npy, labels and splits in JSON (nlohmann-json; the class map through its SAX interface, so that
// a multi-label map of hundreds of MB is never held as a JSON tree).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"
#include "adaqp/graph/npy.h"
#include "class_ids.h"
#include "npz_reader.h"
#include "split_checks.h"
#include "strict_json.h"

namespace adaqp {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

constexpr const char* kFiles[] = {"adj_full.npz", "feats.npy", "class_map.json", "role.json"};
constexpr char kLayout[] =
    "the GraphSAINT layout has adj_full.npz, feats.npy, class_map.json, role.json";
constexpr char kCsrMembers[] =
    "a SciPy CSR .npz (scipy.sparse.save_npz) has indices.npy, indptr.npy, format.npy, shape.npy "
    "and data.npy";

// ---- adj_full.npz -------------------------------------------------------------------------------

// Elements of an int32 or int64 member are streamed in pieces of this many.
constexpr int64_t kPiece = int64_t{1} << 20;

// The next `count` elements of an int32 or int64 member, widened.
std::vector<int64_t> read_ints(NpzMember& m, int64_t count, std::vector<uint8_t>& buffer) {
  m.read(count, buffer);
  return npy_to_int64(buffer, m.array().dtype);
}

// Row i of the matrix lists the in-neighbours (sources) of node i, which is GraphSlice's CSR by
// destination: the rows of `keep` are kept as they are, each then sorted. Both index members are
// streamed and checked whole; only the kept rows are held.
void read_adjacency(const std::string& path, int rank, int world, GraphSlice& s) {
  const NpzReader npz(path, kCsrMembers);
  const NpyArray format = npz.member("format.npy");
  if (format.dtype != NpyDtype::kBytes || format.size() != 1)
    bad_member(path, "format.npy", format, "one byte string such as b'csr'");
  std::string name(format.payload.begin(), format.payload.end());
  name.erase(std::find(name.begin(), name.end(), '\0'), name.end());  // numpy pads with NULs
  if (name != "csr")
    throw InputError(path, "member format.npy",
                     "matrix format '" + name +
                         "' is not supported, expected 'csr' (save with "
                         "scipy.sparse.save_npz(path, matrix.tocsr()))");

  const NpyArray shape_array = npz.member("shape.npy");
  if (!npy_is_int(shape_array) || shape_array.shape.size() != 1 || shape_array.shape[0] != 2)
    bad_member(path, "shape.npy", shape_array, "int32 or int64 [2] (rows, columns)");
  const std::vector<int64_t> shape = npy_to_int64(shape_array);
  const std::string shape_text =
      "matrix shape (" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ")";
  if (shape[1] != shape[0])
    throw InputError(path, "member shape.npy",
                     shape_text + " is not square (an adjacency matrix is N x N)");
  if (shape[0] < 0 || shape[0] == std::numeric_limits<int64_t>::max())
    throw InputError(path, "member shape.npy", shape_text + " has an impossible node count");
  const int64_t n = shape[0];
  s.num_nodes = n;
  const NodeRange keep = slice_range(n, rank, world);

  NpzMember indptr = npz.open("indptr.npy");
  {
    const NpyArray& a = indptr.array();
    if (!npy_is_int(a) || a.shape.size() != 1)
      bad_member(path, "indptr.npy", a, "int32 or int64 [N + 1]");
    if (a.shape[0] != n + 1)
      throw InputError(path, "member indptr.npy",
                       "has " + std::to_string(a.shape[0]) + " entries, expected N + 1 = " +
                           std::to_string(n + 1) + " (N from shape.npy)");
  }
  NpzMember indices = npz.open("indices.npy");
  if (!npy_is_int(indices.array()) || indices.array().shape.size() != 1)
    bad_member(path, "indices.npy", indices.array(), "int32 or int64 [nnz]");
  const int64_t nnz = indices.elements();

  FirstBadValue bad(path);  // reported after each member is read to its end

  // indptr: checked whole; entries keep.first .. keep.first + keep.count kept.
  std::vector<uint8_t> buffer;
  std::vector<int64_t> row_ends;
  int64_t previous = 0;
  for (int64_t at = 0; at <= n; at += kPiece) {
    const int64_t k = std::min(kPiece, n + 1 - at);
    const std::vector<int64_t> piece = read_ints(indptr, k, buffer);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t v = at + i, value = piece[i];
      if (v == 0 && value != 0)
        bad.note("member indptr.npy index 0", "value " + std::to_string(value) + " is not 0");
      if (value < previous)
        bad.note("member indptr.npy index " + std::to_string(v),
                 "value " + std::to_string(value) + " is below the previous " +
                     std::to_string(previous) + " (indptr must not decrease)");
      previous = std::max(previous, value);
      if (v >= keep.first && v <= keep.first + keep.count) row_ends.push_back(value);
    }
  }
  indptr.finish();
  bad.report();
  if (previous != nnz)
    throw InputError(path, "member indptr.npy index " + std::to_string(n),
                     "last value " + std::to_string(previous) + " differs from the " +
                         std::to_string(nnz) + " entries of indices.npy");

  // indices: checked whole; the kept rows' entries held.
  const int64_t lo = row_ends.front(), hi = row_ends.back();
  s.indices.clear();
  s.indices.reserve(static_cast<size_t>(hi - lo));
  for (int64_t at = 0; at < nnz; at += kPiece) {
    const int64_t k = std::min(kPiece, nnz - at);
    const std::vector<int64_t> piece = read_ints(indices, k, buffer);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t e = at + i;
      if (piece[i] < 0 || piece[i] >= n)
        bad.note("member indices.npy index " + std::to_string(e),
                 "column " + std::to_string(piece[i]) + out_of_range(n) + " (N from shape.npy)");
      if (e >= lo && e < hi) s.indices.push_back(piece[i]);
    }
  }
  indices.finish();
  bad.report();
  s.first = keep.first;
  s.indptr.resize(row_ends.size());
  for (size_t i = 0; i < row_ends.size(); ++i) s.indptr[i] = row_ends[i] - lo;
  for (int64_t i = 0; i < s.count(); ++i)
    std::sort(s.indices.begin() + s.indptr[i], s.indices.begin() + s.indptr[i + 1]);
}

// ---- feats.npy ----------------------------------------------------------------------------------

// The rows of `s`'s range, each element checked.
void read_features(const std::string& path, GraphSlice& s) {
  const NpyHeader h = read_npy_header(path);
  const NpyArray& a = h.array;
  const bool float_dtype = a.dtype == NpyDtype::kFloat32 || a.dtype == NpyDtype::kFloat64;
  if (!float_dtype || a.shape.size() != 2)
    throw InputError(path, "",
                     "has dtype " + a.descr() + " and shape " + a.shape_string() +
                         ", expected float32 or float64 [N, F]");
  if (a.shape[0] != s.num_nodes)
    throw InputError(path, "",
                     "has " + std::to_string(a.shape[0]) + " rows, expected N = " +
                         std::to_string(s.num_nodes) + " (the node count of adj_full.npz)");
  s.feat_dim = a.shape[1];
  const int64_t first = s.first * s.feat_dim, count = s.count() * s.feat_dim;
  const std::vector<uint8_t> bytes = read_npy_range(path, h, first, count);
  s.features.resize(static_cast<size_t>(count));
  const auto where = [&s, first](int64_t i) {
    return "index [" + std::to_string((first + i) / s.feat_dim) + ", " +
           std::to_string((first + i) % s.feat_dim) + "]";
  };
  for (int64_t i = 0; i < count; ++i) {
    double value;
    if (a.dtype == NpyDtype::kFloat32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      value = f;
    } else {
      std::memcpy(&value, bytes.data() + 8 * i, 8);
    }
    if (!std::isfinite(value))
      throw InputError(path, where(i), fmt::format("value {} is not finite", value));
    if (std::fabs(value) > std::numeric_limits<float>::max())
      throw InputError(path, where(i), fmt::format("value {} is out of float32 range", value));
    s.features[i] = static_cast<float>(value);
  }
}

// ---- JSON ---------------------------------------------------------------------------------------

// A node id key: a decimal integer as str(int) writes it.
bool parse_node_key(const std::string& key, int64_t& id) {
  if (key.empty() || key.size() > 18 || (key.size() > 1 && key[0] == '0')) return false;
  id = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return false;
    id = id * 10 + (c - '0');
  }
  return true;
}

// class_map.json as a SAX stream: {"<id>": <class id>, ...} or {"<id>": [0/1, ...], ...}.
// Every entry is checked; only the labels of `s`'s range are kept.
class ClassMapReader {
 public:
  ClassMapReader(std::string path, GraphSlice& s)
      : path_(std::move(path)), s_(s), n_(s.num_nodes), seen_(n_, 0) {}

  void finish() {
    for (int64_t v = 0; v < n_; ++v) {
      if (!seen_[v])
        throw InputError(
            path_, "",
            "node " + std::to_string(v) + " has no entry (the keys must be the node ids 0.." +
                std::to_string(n_ - 1) + ", N = " + std::to_string(n_) + " from adj_full.npz)");
    }
    if (kind_ == Kind::kClassIds) {
      s_.num_classes = max_label_ + 1;
    } else if (kind_ == Kind::kLists) {
      s_.multilabel = true;
      s_.num_classes = width_;
      s_.multilabels.resize(rows_.size());
      for (size_t r = 0; r < row_nodes_.size(); ++r)
        std::copy(rows_.begin() + r * width_, rows_.begin() + (r + 1) * width_,
                  s_.multilabels.begin() + (row_nodes_[r] - s_.first) * width_);
    }
  }

  // The SAX interface of nlohmann::json.
  bool start_object(size_t) {
    if (depth_ != 0) fail(where(), "a nested object is not a class id or a 0/1 list");
    depth_ = 1;
    return true;
  }
  bool end_object() {
    depth_ = 0;
    return true;
  }
  bool key(std::string& key) {
    int64_t id = -1;
    if (!parse_node_key(key, id))
      fail("key '" + key + "'", "is not a node id (a decimal integer such as \"17\")");
    if (id >= n_)
      fail("key '" + key + "'", "node id " + key + out_of_range(n_) + " (N from adj_full.npz)");
    if (seen_[id]) fail("key '" + key + "'", "appears twice");
    seen_[id] = 1;
    key_ = key;
    node_ = id;
    return true;
  }
  bool number_unsigned(uint64_t value) {
    return number(value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                      ? std::numeric_limits<int64_t>::max()
                      : static_cast<int64_t>(value),
                  std::to_string(value));
  }
  bool number_integer(int64_t value) { return number(value, std::to_string(value)); }
  bool number_float(double, const std::string& text) { return other("number " + text); }
  bool boolean(bool value) { return other(value ? "true" : "false"); }
  bool null() { return other("null"); }
  bool string(std::string& value) { return other("string \"" + value + "\""); }
  bool binary(json::binary_t&) { return other("binary value"); }
  bool start_array(size_t) {
    if (depth_ != 1) return other("array");
    if (kind_ == Kind::kClassIds) mixed("a 0/1 list");
    if (kind_ == Kind::kNone) {
      kind_ = Kind::kLists;
      first_key_ = key_;
    }
    row_begin_ = rows_.size();
    depth_ = 2;
    return true;
  }
  bool end_array() {
    depth_ = 1;
    const int64_t length = row_length();
    if (width_ < 0) {
      if (length == 0) fail(where(), "the 0/1 list is empty (at least one class)");
      width_ = length;
    } else if (length != width_) {
      fail(where(), "the list has " + std::to_string(length) + " entries, but key '" + first_key_ +
                        "' has " + std::to_string(width_) + " (every node lists every class)");
    }
    if (s_.holds(node_)) {
      row_nodes_.push_back(node_);
    } else {
      rows_.resize(row_begin_);
    }
    return true;
  }
  bool parse_error(size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    malformed_json(path_, byte, e.what());
  }

 private:
  enum class Kind { kNone, kClassIds, kLists };

  std::string where() const {
    return depth_ == 2 ? "key '" + key_ + "' index " + std::to_string(row_length())
                       : "key '" + key_ + "'";
  }
  int64_t row_length() const { return static_cast<int64_t>(rows_.size() - row_begin_); }
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(path_, where, what);
  }
  [[noreturn]] void top_level() const {
    fail("",
         "expected a JSON object mapping node ids (\"0\", \"1\", ...) to class ids or 0/1 "
         "lists");
  }
  [[noreturn]] void mixed(const std::string& found) const {
    fail(where(), found + ", but key '" + first_key_ + "' has " +
                      (kind_ == Kind::kLists ? "a 0/1 list" : "a class id") +
                      " (labels must be all class ids or all 0/1 lists)");
  }
  bool number(int64_t value, const std::string& text) {
    if (depth_ == 0) top_level();
    if (depth_ == 2) {
      if (value != 0 && value != 1) fail(where(), "multi-label value " + text + " is not 0 or 1");
      rows_.push_back(static_cast<uint8_t>(value));
      return true;
    }
    if (kind_ == Kind::kLists) mixed("a class id");
    if (kind_ == Kind::kNone) {
      kind_ = Kind::kClassIds;
      first_key_ = key_;
      s_.labels.assign(static_cast<size_t>(s_.count()), 0);
    }
    const std::string problem = class_id_problem(value, n_);
    if (!problem.empty()) fail(where(), problem);
    if (s_.holds(node_)) s_.labels[node_ - s_.first] = value;
    max_label_ = std::max(max_label_, value);
    return true;
  }
  bool other(const std::string& what) {
    if (depth_ == 0) top_level();
    fail(where(), what + " is not " + (depth_ == 2 ? "0 or 1" : "a class id or a 0/1 list"));
  }

  std::string path_;
  GraphSlice& s_;
  int64_t n_;
  std::vector<char> seen_;
  int depth_ = 0;  // 0 outside the object, 1 inside it, 2 inside a 0/1 list
  Kind kind_ = Kind::kNone;
  std::string key_, first_key_;
  int64_t node_ = -1;
  int64_t max_label_ = -1;
  int64_t width_ = -1;  // classes of a multi-label map, once the first list ended
  // The 0/1 lists in file order (width_ entries each) and the node of each; placed by finish().
  std::vector<uint8_t> rows_;
  std::vector<int64_t> row_nodes_;
  size_t row_begin_ = 0;
};

void read_class_map(const std::string& path, GraphSlice& s) {
  std::ifstream in = open_json(path);
  ClassMapReader reader(path, s);
  json::sax_parse(in, &reader);
  reader.finish();
}

// role.json: {"tr": [...], "va": [...], "te": [...]}, disjoint lists of node ids; checked whole,
// the ids of `s`'s range kept.
void read_roles(const std::string& path, GraphSlice& s) {
  const json roles = parse_strict_json(path);
  const std::vector<std::string> names = {"tr", "va", "te"};
  std::vector<int64_t>* splits[] = {&s.train, &s.valid, &s.test};
  if (!roles.is_object())
    throw InputError(path, "",
                     std::string("expected a JSON object {\"tr\": [...], \"va\": [...], \"te\": "
                                 "[...]}, got ") +
                         roles.type_name());
  for (const auto& item : roles.items()) {
    if (std::find(names.begin(), names.end(), item.key()) == names.end())
      throw InputError(path, "key '" + item.key() + "'", "is not a role (expected tr, va, te)");
  }
  std::vector<char> owner(static_cast<size_t>(s.num_nodes), 0);
  bool any_training = false;
  for (int r = 0; r < 3; ++r) {
    const auto it = roles.find(names[r]);
    if (it == roles.end())
      throw InputError(path, "", std::string("key '") + names[r] + "' is missing");
    if (!it->is_array())
      throw InputError(path, std::string("key '") + names[r] + "'",
                       std::string("expected a list of node ids, got ") + it->type_name());
    std::vector<int64_t>& ids = *splits[r];
    for (size_t i = 0; i < it->size(); ++i) {
      const json& entry = (*it)[i];
      const std::string where = std::string(names[r]) + " index " + std::to_string(i);
      if (!entry.is_number_integer())
        throw InputError(path, where, "entry " + json_excerpt(entry) + " is not a node id");
      const bool in_range =
          entry.is_number_unsigned() && entry.get<uint64_t>() < static_cast<uint64_t>(s.num_nodes);
      if (!in_range)
        throw InputError(path, where,
                         "node id " + json_excerpt(entry) + out_of_range(s.num_nodes) +
                             " (N from adj_full.npz)");
      const int64_t v = entry.get<int64_t>();
      claim_split_node(owner[static_cast<size_t>(v)], static_cast<char>(r + 1), v, names, path,
                       where, "roles");
      any_training = any_training || r == 0;
      if (s.holds(v)) ids.push_back(v);
    }
    std::sort(ids.begin(), ids.end());
  }
  if (!any_training) throw InputError(path, "key 'tr'", "the training role is empty");
}

}  // namespace

GraphSlice load_graphsaint_slice(const std::string& dir, int rank, int world) {
  const fs::path root(dir);
  const auto file = [&root](const std::string& name) { return (root / name).string(); };
  std::error_code ec;
  for (const char* name : kFiles) {
    if (!fs::is_regular_file(file(name), ec))
      throw InputError(file(name), "", std::string("file not found (") + kLayout + ")");
  }
  GraphSlice s;
  s.name = directory_name(root);
  read_adjacency(file("adj_full.npz"), rank, world, s);
  read_features(file("feats.npy"), s);
  read_class_map(file("class_map.json"), s);
  read_roles(file("role.json"), s);
  return s;
}

Graph load_graphsaint(const std::string& dir) {
  return whole_graph(load_graphsaint_slice(dir, 0, 1));
}

}  // namespace adaqp
