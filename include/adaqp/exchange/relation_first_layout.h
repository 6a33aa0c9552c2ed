// The relation-first layout of a worker's halo exchanges (communication.exchange: relation_first;
// docs/design.md section 4, "R-GCN"), for layers that aggregate every relation on its own (R-GCN):
//   y_i = h_i W_0 + b + sum_r (1 / deg_r(i)) sum_{j in N_r(i)} h_j W_r.
// Every term h_j W_r of a cut edge j -> i (j the sender's, i the receiver's) travels inside one of
// two kinds of rows, both at the layer's output width and formed by the sender:
//   a transformed source row h_j W_r, for one (source, relation): the receiver adds it into each
//     destination i of its edges with coefficient (edges j -> i of r) / deg_r(i);
//   a destination's partial sum, the sender's other terms for destination i:
//     m_i = sum_r (1 / deg_r(i)) sum_{j in N_r(i), j the sender's, (j, r) not sent} h_j W_r,
//     added into y_i with coefficient 1.
// Per (sender, receiver) pair the rows are a minimum vertex cover of the bipartite graph of
// (source, relation) pairs and destinations (partition/boundary_cover.h, relation_first_graph):
// the fewest rows that carry every cut edge, never more than one per destination. Backward
// returns each row's gradient (the received block transposed); the sender takes its share of
// the W_r and h gradients from it. The receiver knows every cut edge into it and every degree,
// so it chooses the cover and tells each sender its rows, their pairs and edges: one start-up
// exchange of index lists, no partition format change.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/boundary.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct RelationFirstLayout {
  // Per pair, the transformed source rows (keyed relation_row_key, ascending by (source position,
  // relation)), then the destinations' partial sums (keyed partial_row_key(sender, destination's
  // global id), ascending by owned row).
  Boundary boundary;
  // Receiver: owned rows x received rows in CSR, columns ascending, the coefficient with which the
  // received row adds into the owned row.
  std::vector<int64_t> halo_indptr;
  std::vector<int32_t> halo_indices;
  std::vector<float> halo_values;
  // Sender: the pairs (row, relation) of the rows it sends, in send order and by relation within a
  // row: the sent row, the relation, the divisor (a partial sum: the destination's in-degree by
  // that relation in the whole graph; a transformed source row: 1), and the owned rows summed
  // (pair_sources[pair_indptr[p] .. pair_indptr[p + 1]), a duplicate edge twice; one source for a
  // transformed source row).
  std::vector<int64_t> pair_row;
  std::vector<int32_t> pair_relation;
  std::vector<int64_t> pair_degree;
  std::vector<int64_t> pair_indptr{0};
  std::vector<int32_t> pair_sources;

  int64_t num_pairs() const { return static_cast<int64_t>(pair_row.size()); }
};

// Whether the layout's message keys (relation_row_key's largest: global_num_nodes * (1 + parts +
// relations)) stay below the 2^40 the noise counters take, for `part`'s graph and world.
inline bool relation_first_keys_fit(const Part& part) {
  return part.global_num_nodes <
         (int64_t{1} << 40) / (1 + int64_t{part.num_parts} + int64_t{part.num_relations});
}

// Collective: every rank of `comm` (whose rank and size must be the part's, heterogeneous) lists
// for each sender the cover's transformed sources and partial sums it receives, and builds the
// pairs it sends from the peers' lists. Throws Error for inconsistent lists from a peer, and
// ConfigError where the keys do not fit (relation_first_keys_fit).
RelationFirstLayout relation_first_layout(const Part& part, Communicator& comm);

}  // namespace adaqp
