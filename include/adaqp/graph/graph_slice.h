// One rank's share of a graph that no process holds whole: a contiguous range of node ids with
// their in-edges and node data. The distributed start-up (graph/slice_loader.h,
// partition/ptscotch_partitioner.h, partition/part_from_slices.h) works on slices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/graph/graph.h"

namespace adaqp {

// The nodes [first, first + count) of rank `rank` among `world`: [0, num_nodes) cut into
// contiguous ranges whose sizes differ by at most one, in rank order.
struct NodeRange {
  int64_t first = 0;
  int64_t count = 0;
};
NodeRange slice_range(int64_t num_nodes, int rank, int world);
// The rank whose range holds node v.
int slice_holder(int64_t num_nodes, int world, int64_t v);

// Graph's fields restricted to one range: row i is node first + i; sources and split ids are
// global; rows sorted ascending as in Graph.
struct GraphSlice {
  std::string name;
  int64_t num_nodes = 0;  // of the whole graph
  int64_t first = 0;
  std::vector<int64_t> indptr{0};  // count() + 1
  std::vector<int64_t> indices;    // global source ids
  int64_t feat_dim = 0;
  std::vector<float> features;  // count() x feat_dim
  int64_t num_classes = 0;
  bool multilabel = false;
  std::vector<int64_t> labels;              // single-label: count() entries
  std::vector<uint8_t> multilabels;         // multi-label: count() x num_classes
  std::vector<int64_t> train, valid, test;  // global ids inside the range, ascending

  int64_t count() const { return static_cast<int64_t>(indptr.size()) - 1; }
  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
  bool holds(int64_t v) const { return v >= first && v < first + count(); }
};

// Rank `rank`'s slice of a whole graph (slice_range's range).
GraphSlice slice_of(const Graph& g, int rank, int world);
// The graph of the slice of rank 0 of 1 (its arrays moved).
Graph whole_graph(GraphSlice s);

// Sets the slice's rows (`rows` of them, from s.first) from in-edges src[i] -> dst[i] whose targets
// lie in the slice: sources sorted within each row, duplicates kept (Graph::from_edges for a
// slice). A counting sort by target, then each row sorted.
void set_slice_rows(GraphSlice& s, int64_t rows, const std::vector<int64_t>& src,
                    const std::vector<int64_t>& dst);

// Row-local transforms, as apply_transform does them to a whole graph (GraphTransform): one
// self-loop per node; feature rows scaled to sum 1.
void set_slice_self_loops(GraphSlice& s);
void row_normalize_slice(GraphSlice& s);

}  // namespace adaqp
