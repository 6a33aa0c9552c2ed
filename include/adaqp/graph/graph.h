// The in-memory graph every loader produces and the partitioner consumes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adaqp {

// One relation of a heterogeneous graph: edges from nodes of type src_type to nodes of type
// dst_type (indices into Graph::node_types), named as in OGB's (head, relation, tail) triplets.
struct Relation {
  int32_t src_type = 0;
  std::string name;
  int32_t dst_type = 0;

  bool operator==(const Relation& o) const {
    return src_type == o.src_type && name == o.name && dst_type == o.dst_type;
  }
};

// Nodes a graph may have: a partition's parts hold node ids in 32 bits (partition/part.h).
constexpr int64_t kMaxNodes = int64_t{1} << 31;

// A directed graph stored as CSR by destination: the in-neighbours (sources) of node v are
// indices[indptr[v] .. indptr[v+1]), sorted ascending. Undirected graphs list both directions.
// Node data are row-major; labels are single-label (class id per node) or multi-label (0/1 matrix).
struct Graph {
  std::string name;
  int64_t num_nodes = 0;
  std::vector<int64_t> indptr;   // num_nodes + 1
  std::vector<int64_t> indices;  // num_edges, source node ids

  int64_t feat_dim = 0;
  std::vector<float> features;  // num_nodes x feat_dim

  int64_t num_classes = 0;
  bool multilabel = false;
  std::vector<int64_t> labels;       // single-label: num_nodes entries in [0, num_classes)
  std::vector<uint8_t> multilabels;  // multi-label: num_nodes x num_classes of 0/1

  std::vector<int64_t> train, valid, test;  // node ids, ascending, pairwise disjoint

  // A heterogeneous graph's types (all empty for a homogeneous one; docs/data-formats.md): node
  // type t holds the ids [type_offsets[t], type_offsets[t + 1]); edge e (in CSR order) is of
  // relation edge_relation[e], whose ends are of its source and destination types. The fields
  // above are then its homogeneous view: the types without features have zero rows, and the nodes
  // of the types without labels hold class 0 and are in no split.
  std::vector<std::string> node_types;
  std::vector<int64_t> type_offsets;  // node_types.size() + 1
  std::vector<Relation> relations;
  std::vector<int32_t> edge_relation;  // num_edges

  bool heterogeneous() const { return !node_types.empty(); }
  // The type of node v (heterogeneous graphs).
  int32_t node_type(int64_t v) const;
  // Whether some node type with nodes (a homogeneous graph's one type) has zero rows only: the
  // rows model.featureless: embedding learns (the trainer finds the same types over the parts).
  bool has_featureless_type() const;

  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
  int64_t in_degree(int64_t v) const { return indptr[v + 1] - indptr[v]; }
  std::vector<int64_t> out_degrees() const;

  // Builds the CSR from an edge list (src[i] -> dst[i]); sources of each row end up sorted.
  // Duplicate edges are kept. Throws InvariantError on ids outside [0, num_nodes).
  static Graph from_edges(int64_t num_nodes, const std::vector<int64_t>& src,
                          const std::vector<int64_t>& dst);
  // The same with each edge's relation (rel[i]), kept in edge_relation: each row sorted by source,
  // then relation. Types and relations themselves are the caller's to set.
  static Graph from_edges(int64_t num_nodes, const std::vector<int64_t>& src,
                          const std::vector<int64_t>& dst, const std::vector<int32_t>& rel);

  // Checks every structural invariant above (sizes, sorted rows, ranges, disjoint splits,
  // finite features; for a heterogeneous graph also its types: ascending type ranges covering every
  // node, relations between known types, every edge's ends of its relation's types); throws
  // InputError naming `origin` and the offending index and value.
  void validate(const std::string& origin) const;
};

// Optional rewrites applied after loading, in the order add_reverse, symmetrize, self_loops,
// row_normalize.
struct GraphTransform {
  // Add every reverse edge, drop duplicate edges. A ConfigError for a heterogeneous graph (it would
  // merge relations: add_reverse instead).
  bool symmetrize = false;
  // Drop existing self-loops, then add one per node; for a heterogeneous graph the loops form one
  // relation per node type, (t, "self", t).
  bool self_loops = false;
  bool row_normalize = false;  // scale each feature row to unit L1 norm (rows of zeros stay 0)
  // Heterogeneous graphs: every relation (s, r, d) between two types gains its reverse relation
  // (d, "rev_" + r, s); a relation within one type gains its reverse edges itself (undirected,
  // duplicates dropped), as PyG's ToUndirected does. A ConfigError for a homogeneous graph.
  bool add_reverse = false;
};
void apply_transform(Graph& g, const GraphTransform& t);

// A stable content hash of structure, features, labels and splits (not the name): identifies the
// dataset a partition was made from. 32 hex digits: the zlib CRC-32 of each of the four parts, in
// that order, so a mismatch also tells which part differs.
std::string fingerprint(const Graph& g);

}  // namespace adaqp
