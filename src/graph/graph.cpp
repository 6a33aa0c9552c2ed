#include "adaqp/graph/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "adaqp/common/crc.h"
#include "adaqp/common/error.h"
#include "row_transforms.h"

namespace adaqp {
namespace {

void symmetrize(Graph& g) {
  std::vector<int64_t> src, dst;
  src.reserve(2 * g.indices.size());
  dst.reserve(2 * g.indices.size());
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      src.push_back(g.indices[e]);
      dst.push_back(v);
      src.push_back(v);
      dst.push_back(g.indices[e]);
    }
  }
  Graph sym = Graph::from_edges(g.num_nodes, src, dst);
  drop_repeated_row_entries(sym.indptr, sym.indices);
  g.indptr = std::move(sym.indptr);
  g.indices = std::move(sym.indices);
}

// Replaces the self-loops of every row by exactly one, keeping rows sorted.
void set_self_loops(Graph& g) {
  std::vector<int64_t> indptr(g.num_nodes + 1, 0);
  std::vector<int64_t> indices;
  indices.reserve(g.indices.size() + g.num_nodes);
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    append_row_with_one_self_loop(g.indices.data() + g.indptr[v],
                                  g.indices.data() + g.indptr[v + 1], v, indices);
    indptr[v + 1] = static_cast<int64_t>(indices.size());
  }
  g.indptr = std::move(indptr);
  g.indices = std::move(indices);
}

// Every edge of g as (source, destination, relation), in CSR order.
struct EdgeList {
  std::vector<int64_t> src, dst;
  std::vector<int32_t> rel;

  void add(int64_t u, int64_t v, int32_t r) {
    src.push_back(u);
    dst.push_back(v);
    rel.push_back(r);
  }
};

EdgeList typed_edges(const Graph& g) {
  EdgeList l;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
      l.add(g.indices[e], v, g.edge_relation[e]);
  }
  return l;
}

// Rebuilds g's CSR from `l`; within the relations where `dedup` holds, repeated (source,
// relation) entries of a row are dropped.
void set_typed_edges(Graph& g, const EdgeList& l, const std::vector<char>& dedup) {
  Graph b = Graph::from_edges(g.num_nodes, l.src, l.dst, l.rel);
  g.indptr.assign(g.num_nodes + 1, 0);
  g.indices.clear();
  g.edge_relation.clear();
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    const size_t row_start = g.indices.size();
    for (int64_t e = b.indptr[v]; e < b.indptr[v + 1]; ++e) {
      const int32_t r = b.edge_relation[e];
      const bool repeated = g.indices.size() > row_start && g.indices.back() == b.indices[e] &&
                            g.edge_relation.back() == r;
      if (repeated && dedup[r]) continue;
      g.indices.push_back(b.indices[e]);
      g.edge_relation.push_back(r);
    }
    g.indptr[v + 1] = static_cast<int64_t>(g.indices.size());
  }
}

void add_reverse(Graph& g) {
  if (!g.heterogeneous())
    throw ConfigError(
        "dataset.add_reverse applies to heterogeneous graphs (typed nodes and edges); " + g.name +
        " is homogeneous: use dataset.symmetrize");
  EdgeList l = typed_edges(g);
  const size_t original = g.relations.size();
  std::vector<int32_t> reverse(original);
  std::vector<char> dedup(original, 0);
  // The data's own reverse of relation `rel`, a relation between its types the other way named
  // rev_<its name> (or <name> where `rel` is rev_<name>): original.size() where there is none.
  const auto data_reverse = [&](const Relation& rel) {
    size_t j = 0;
    for (; j < original; ++j) {
      const Relation& o = g.relations[j];
      if (o.src_type == rel.dst_type && o.dst_type == rel.src_type &&
          (o.name == "rev_" + rel.name || rel.name == "rev_" + o.name))
        break;
    }
    return j;
  };
  for (size_t r = 0; r < original; ++r) {
    const Relation rel = g.relations[r];
    const size_t back = rel.src_type == rel.dst_type ? r : data_reverse(rel);
    if (back < original) {
      // Within one type, or a reverse the data already has (PyG's ToUndirected exported, say):
      // the reverse edges join it, and those already there are dropped, so that a graph that
      // holds its reverses stays as it is (but for its duplicate edges, dropped in both).
      reverse[r] = static_cast<int32_t>(back);
      dedup[back] = 1;
    } else {
      reverse[r] = static_cast<int32_t>(g.relations.size());
      g.relations.push_back(Relation{rel.dst_type, "rev_" + rel.name, rel.src_type});
      dedup.push_back(0);
    }
  }
  const size_t edges = l.src.size();
  for (size_t i = 0; i < edges; ++i) l.add(l.dst[i], l.src[i], reverse[l.rel[i]]);
  set_typed_edges(g, l, dedup);
}

// One self-loop per node, in the relation (t, "self", t) of its type (added where missing); the
// existing self-loops are dropped.
void set_typed_self_loops(Graph& g) {
  const auto types = static_cast<int32_t>(g.node_types.size());
  std::vector<int32_t> self(types);
  for (int32_t t = 0; t < types; ++t) {
    const Relation loop{t, "self", t};
    const auto it = std::find(g.relations.begin(), g.relations.end(), loop);
    self[t] = static_cast<int32_t>(it - g.relations.begin());
    if (it == g.relations.end()) g.relations.push_back(loop);
  }
  EdgeList l;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      if (g.indices[e] != v) l.add(g.indices[e], v, g.edge_relation[e]);
    }
    l.add(v, v, self[g.node_type(v)]);
  }
  set_typed_edges(g, l, std::vector<char>(g.relations.size(), 0));
}

void row_normalize(Graph& g) {
  for (int64_t v = 0; v < g.num_nodes; ++v)
    normalize_row(g.features.data() + v * g.feat_dim, g.feat_dim);
}

template <typename T>
uint32_t crc_add(uint32_t crc, const std::vector<T>& values) {
  const uint64_t count = values.size();
  return crc_bytes(crc_bytes(crc, &count, sizeof(count)), values.data(), values.size() * sizeof(T));
}

uint32_t crc_add(uint32_t crc, const std::string& text) {
  return crc_add(crc, std::vector<char>(text.begin(), text.end()));
}

uint32_t crc_add(uint32_t crc, int64_t value) {
  return crc_bytes(crc, &value, sizeof(value));
}

void check_split(const Graph& g, const std::string& origin, const char* name,
                 const std::vector<int64_t>& ids, std::vector<char>& owner, char tag) {
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string where = std::string(name) + " index " + std::to_string(i);
    const int64_t v = ids[i];
    if (v < 0 || v >= g.num_nodes)
      throw InputError(origin, where,
                       "node id " + std::to_string(v) + " is out of range [0, " +
                           std::to_string(g.num_nodes) + ")");
    if (i > 0 && v <= ids[i - 1])
      throw InputError(origin, where,
                       "node id " + std::to_string(v) + " does not follow " +
                           std::to_string(ids[i - 1]) + " in ascending order");
    if (owner[v] != 0)
      throw InputError(origin, where,
                       "node id " + std::to_string(v) + " is in two splits (" + name + " and " +
                           (owner[v] == 't' ? "train" : "valid") + ")");
    owner[v] = tag;
  }
}

// The types of a heterogeneous graph (Graph::validate).
void validate_types(const Graph& g, const std::string& origin) {
  const auto str = [](auto value) { return std::to_string(value); };
  if (!g.heterogeneous()) {
    if (!g.type_offsets.empty() || !g.relations.empty() || !g.edge_relation.empty())
      throw InputError(origin, "node types", "relations or type ranges without node types");
    return;
  }
  const auto types = static_cast<int64_t>(g.node_types.size());
  if (static_cast<int64_t>(g.type_offsets.size()) != types + 1 || g.type_offsets.front() != 0 ||
      g.type_offsets.back() != g.num_nodes)
    throw InputError(origin, "node types",
                     str(g.type_offsets.size()) + " type offsets for " + str(types) +
                         " types must run from 0 to the " + str(g.num_nodes) + " nodes");
  for (int64_t t = 0; t < types; ++t) {
    if (g.type_offsets[t + 1] < g.type_offsets[t])
      throw InputError(
          origin, "node type '" + g.node_types[t] + "'",
          "has a negative node count " + str(g.type_offsets[t + 1] - g.type_offsets[t]));
  }
  for (int64_t t = 0; t < types; ++t) {
    if (std::count(g.node_types.begin(), g.node_types.end(), g.node_types[t]) != 1)
      throw InputError(origin, "node type '" + g.node_types[t] + "'", "is named twice");
  }
  for (size_t r = 0; r < g.relations.size(); ++r) {
    const Relation& rel = g.relations[r];
    if (std::count(g.relations.begin(), g.relations.end(), rel) != 1)
      throw InputError(origin, "relation " + str(r) + " '" + rel.name + "'",
                       "is listed twice with the same types");
    if (rel.src_type < 0 || rel.src_type >= types || rel.dst_type < 0 || rel.dst_type >= types)
      throw InputError(origin, "relation " + str(r) + " '" + rel.name + "'",
                       "joins node types " + str(rel.src_type) + " and " + str(rel.dst_type) +
                           " of the " + str(types));
  }
  if (g.edge_relation.size() != g.indices.size())
    throw InputError(
        origin, "edge relations",
        "has " + str(g.edge_relation.size()) + " entries for " + str(g.indices.size()) + " edges");
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int32_t r = g.edge_relation[e];
      if (r < 0 || r >= static_cast<int32_t>(g.relations.size()))
        throw InputError(origin, "edge index " + str(e),
                         "relation " + str(r) + " of the " + str(g.relations.size()));
      const Relation& rel = g.relations[r];
      const int32_t from = g.node_type(g.indices[e]), to = g.node_type(v);
      if (from != rel.src_type || to != rel.dst_type)
        throw InputError(
            origin, "edge index " + str(e),
            "edge " + str(g.indices[e]) + " -> " + str(v) + " joins types '" + g.node_types[from] +
                "' and '" + g.node_types[to] + "', but its relation '" + rel.name + "' joins '" +
                g.node_types[rel.src_type] + "' and '" + g.node_types[rel.dst_type] + "'");
    }
  }
}

}  // namespace

std::vector<int64_t> Graph::out_degrees() const {
  std::vector<int64_t> degrees(num_nodes, 0);
  for (int64_t u : indices) {
    ADAQP_CHECK(u >= 0 && u < num_nodes, "source node id " + std::to_string(u));
    ++degrees[u];
  }
  return degrees;
}

int32_t Graph::node_type(int64_t v) const {
  ADAQP_CHECK(heterogeneous() && v >= 0 && v < num_nodes, "node " + std::to_string(v));
  const auto it = std::upper_bound(type_offsets.begin(), type_offsets.end(), v);
  return static_cast<int32_t>(it - type_offsets.begin()) - 1;
}

bool Graph::has_featureless_type() const {
  const size_t types = heterogeneous() ? node_types.size() : 1;
  std::vector<bool> featured(types, false);
  for (size_t t = 0; heterogeneous() && t < types; ++t)
    featured[t] = type_offsets[t + 1] == type_offsets[t];  // no nodes: nothing to learn
  for (int64_t v = 0; v < num_nodes; ++v) {
    const float* row = features.data() + v * feat_dim;
    if (std::any_of(row, row + feat_dim, [](float x) { return x != 0; }))
      featured[heterogeneous() ? static_cast<size_t>(node_type(v)) : 0] = true;
  }
  return std::find(featured.begin(), featured.end(), false) != featured.end();
}

Graph Graph::from_edges(int64_t num_nodes, const std::vector<int64_t>& src,
                        const std::vector<int64_t>& dst, const std::vector<int32_t>& rel) {
  ADAQP_CHECK_EQ(src.size(), rel.size(), "sources and relations");
  Graph g = from_edges(num_nodes, src, dst);
  // The same counting sort over edge positions, each row then sorted by (source, relation).
  std::vector<int64_t> cursor(g.indptr.begin(), g.indptr.end() - 1), position(src.size());
  for (size_t i = 0; i < src.size(); ++i) position[cursor[dst[i]]++] = static_cast<int64_t>(i);
  for (int64_t v = 0; v < num_nodes; ++v) {
    std::sort(
        position.begin() + g.indptr[v], position.begin() + g.indptr[v + 1],
        [&](int64_t a, int64_t b) { return src[a] != src[b] ? src[a] < src[b] : rel[a] < rel[b]; });
  }
  g.edge_relation.resize(src.size());
  for (size_t e = 0; e < position.size(); ++e) g.edge_relation[e] = rel[position[e]];
  return g;
}

Graph Graph::from_edges(int64_t num_nodes, const std::vector<int64_t>& src,
                        const std::vector<int64_t>& dst) {
  ADAQP_CHECK_GE(num_nodes, 0, "num_nodes");
  ADAQP_CHECK_EQ(src.size(), dst.size(), "source and destination entries");
  Graph g;
  g.num_nodes = num_nodes;
  g.indptr.assign(num_nodes + 1, 0);
  for (size_t i = 0; i < src.size(); ++i) {
    ADAQP_CHECK(src[i] >= 0 && src[i] < num_nodes && dst[i] >= 0 && dst[i] < num_nodes,
                "edge " + std::to_string(i) + " (" + std::to_string(src[i]) + " -> " +
                    std::to_string(dst[i]) + ") with " + std::to_string(num_nodes) + " nodes");
    ++g.indptr[dst[i] + 1];
  }
  for (int64_t v = 0; v < num_nodes; ++v) g.indptr[v + 1] += g.indptr[v];
  g.indices.resize(src.size());
  std::vector<int64_t> cursor(g.indptr.begin(), g.indptr.end() - 1);
  for (size_t i = 0; i < src.size(); ++i) g.indices[cursor[dst[i]]++] = src[i];
  for (int64_t v = 0; v < num_nodes; ++v)
    std::sort(g.indices.begin() + g.indptr[v], g.indices.begin() + g.indptr[v + 1]);
  return g;
}

void Graph::validate(const std::string& origin) const {
  const auto str = [](auto value) { return std::to_string(value); };
  if (num_nodes < 0) throw InputError(origin, "", "negative node count " + str(num_nodes));
  if (static_cast<int64_t>(indptr.size()) != num_nodes + 1)
    throw InputError(origin, "indptr",
                     "has " + str(indptr.size()) + " entries, expected " + str(num_nodes + 1));
  if (indptr[0] != 0) throw InputError(origin, "indptr index 0", "is " + str(indptr[0]));
  for (int64_t v = 0; v < num_nodes; ++v) {
    if (indptr[v + 1] < indptr[v] || indptr[v + 1] > num_edges())
      throw InputError(origin, "indptr index " + str(v + 1),
                       "value " + str(indptr[v + 1]) + " is out of order or past " +
                           str(num_edges()) + " edges");
  }
  if (indptr[num_nodes] != num_edges())
    throw InputError(origin, "indptr index " + str(num_nodes),
                     "is " + str(indptr[num_nodes]) + ", expected " + str(num_edges()));
  for (int64_t v = 0; v < num_nodes; ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      const int64_t u = indices[e];
      if (u < 0 || u >= num_nodes)
        throw InputError(
            origin, "edge index " + str(e),
            "source node id " + str(u) + " is out of range [0, " + str(num_nodes) + ")");
      if (e > indptr[v] && u < indices[e - 1])
        throw InputError(origin, "edge index " + str(e),
                         "sources of node " + str(v) + " are not sorted (" + str(u) + " after " +
                             str(indices[e - 1]) + ")");
    }
  }

  if (feat_dim < 0) throw InputError(origin, "", "negative feature dimension " + str(feat_dim));
  if (static_cast<int64_t>(features.size()) != num_nodes * feat_dim)
    throw InputError(origin, "features",
                     "has " + str(features.size()) + " values, expected " + str(num_nodes) + " x " +
                         str(feat_dim));
  for (size_t i = 0; i < features.size(); ++i) {
    if (!std::isfinite(features[i]))
      throw InputError(origin, "node " + str(i / feat_dim) + " feature " + str(i % feat_dim),
                       fmt::format("value {} is not finite", features[i]));
  }

  if (num_classes < 0 || (num_nodes > 0 && num_classes == 0))
    throw InputError(origin, "", "invalid class count " + str(num_classes));
  if (multilabel) {
    if (!labels.empty()) throw InputError(origin, "labels", "multi-label graph has class ids");
    if (static_cast<int64_t>(multilabels.size()) != num_nodes * num_classes)
      throw InputError(origin, "multilabels",
                       "has " + str(multilabels.size()) + " values, expected " + str(num_nodes) +
                           " x " + str(num_classes));
    for (size_t i = 0; i < multilabels.size(); ++i) {
      if (multilabels[i] > 1)
        throw InputError(origin, "node " + str(i / num_classes) + " class " + str(i % num_classes),
                         "multi-label value " + str(int{multilabels[i]}) + " is not 0 or 1");
    }
  } else {
    if (!multilabels.empty())
      throw InputError(origin, "multilabels", "single-label graph has a label matrix");
    if (static_cast<int64_t>(labels.size()) != num_nodes)
      throw InputError(origin, "labels",
                       "has " + str(labels.size()) + " entries, expected " + str(num_nodes));
    for (int64_t v = 0; v < num_nodes; ++v) {
      if (labels[v] < 0)
        throw InputError(origin, "node " + str(v),
                         "label " + str(labels[v]) + " is negative (class ids start at 0)");
      if (labels[v] >= num_classes)
        throw InputError(origin, "node " + str(v),
                         "label " + str(labels[v]) + " is out of range [0, " + str(num_classes) +
                             ") of the " + str(num_classes) + " classes");
    }
  }

  std::vector<char> owner(num_nodes, 0);
  check_split(*this, origin, "train", train, owner, 't');
  check_split(*this, origin, "valid", valid, owner, 'v');
  check_split(*this, origin, "test", test, owner, 's');
  validate_types(*this, origin);
}

void apply_transform(Graph& g, const GraphTransform& t) {
  if (t.add_reverse) add_reverse(g);
  if (t.symmetrize) {
    if (g.heterogeneous())
      throw ConfigError("dataset.symmetrize would merge the relations of " + g.name +
                        ", a heterogeneous graph: use dataset.add_reverse");
    symmetrize(g);
  }
  if (t.self_loops) {
    if (g.heterogeneous()) {
      set_typed_self_loops(g);
    } else {
      set_self_loops(g);
    }
  }
  if (t.row_normalize) row_normalize(g);
}

std::string fingerprint(const Graph& g) {
  const uint32_t empty = kCrcEmpty;
  uint32_t structure = crc_add(crc_add(crc_add(empty, g.num_nodes), g.indptr), g.indices);
  if (g.heterogeneous()) {
    structure = crc_add(crc_add(structure, g.type_offsets), g.edge_relation);
    for (const std::string& name : g.node_types) structure = crc_add(structure, name);
    for (const Relation& r : g.relations) {
      structure =
          crc_add(crc_add(crc_add(structure, int64_t{r.src_type}), r.name), int64_t{r.dst_type});
    }
  }
  const uint32_t features = crc_add(crc_add(empty, g.feat_dim), g.features);
  const uint32_t labels =
      crc_add(crc_add(crc_add(crc_add(empty, g.num_classes), int64_t{g.multilabel}), g.labels),
              g.multilabels);
  const uint32_t splits = crc_add(crc_add(crc_add(empty, g.train), g.valid), g.test);
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%08x%08x%08x%08x", structure, features, labels, splits);
  return hex;
}

}  // namespace adaqp
