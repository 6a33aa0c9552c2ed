// The in-memory graph every loader produces and the partitioner consumes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adaqp {

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

  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
  int64_t in_degree(int64_t v) const { return indptr[v + 1] - indptr[v]; }
  std::vector<int64_t> out_degrees() const;

  // Builds the CSR from an edge list (src[i] -> dst[i]); sources of each row end up sorted.
  // Duplicate edges are kept. Throws InvariantError on ids outside [0, num_nodes).
  static Graph from_edges(int64_t num_nodes, const std::vector<int64_t>& src,
                          const std::vector<int64_t>& dst);

  // Checks every structural invariant above (sizes, sorted rows, ranges, disjoint splits,
  // finite features); throws InputError naming `origin` and the offending index and value.
  void validate(const std::string& origin) const;
};

// Optional rewrites applied after loading, in this order.
struct GraphTransform {
  bool symmetrize = false;     // add every reverse edge, drop duplicate edges
  bool self_loops = false;     // drop existing self-loops, then add one per node
  bool row_normalize = false;  // scale each feature row to sum 1 (rows summing to 0 stay 0)
};
void apply_transform(Graph& g, const GraphTransform& t);

// A stable content hash of structure, features, labels and splits (not the name): identifies the
// dataset a partition was made from. 32 hex digits: the zlib CRC-32 of each of the four parts, in
// that order, so a mismatch also tells which part differs.
std::string fingerprint(const Graph& g);

}  // namespace adaqp
