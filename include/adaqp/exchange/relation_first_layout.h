// The relation-first layout of a worker's halo exchanges (communication.exchange: relation_first;
// docs/design.md section 4, "R-GCN"), for layers that aggregate every relation on its own (R-GCN):
//   y_i = h_i W_0 + b + sum_r (1 / deg_r(i)) sum_{j in N_r(i)} h_j W_r.
// Per (sender, receiver) pair, one row per destination node i of the receiver with an in-edge from
// the sender: the sender's whole contribution to y_i,
//   m_i = sum_r (1 / deg_r(i)) sum_{j in N_r(i), j the sender's} h_j W_r,
// formed by the sender (its pairs (i, r): aggregate, transform, sum) at the layer's output width,
// and added into y_i by the receiver. Backward returns dy_i for each such row; the sender takes
// its share of the W_r and h gradients from it. The receiver knows every cut edge into it and every
// degree, so it tells each sender its destinations, their pairs and edges: one start-up exchange of
// index lists, no partition format change.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/boundary.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct RelationFirstLayout {
  // Rows keyed partial_row_key(sender, destination's global id), destinations ascending by owned
  // row within a pair.
  Boundary boundary;
  // Receiver: owned rows x received rows in CSR, an entry (coefficient 1) where the received row
  // adds into the owned row: one per sender with an edge into the row.
  std::vector<int64_t> halo_indptr;
  std::vector<int32_t> halo_indices;
  // Sender: the pairs (destination, relation) of the rows it sends, in send order and by relation
  // within a row: the sent row, the relation, the destination's in-degree by that relation in the
  // whole graph (the mean's divisor), and the owned rows summed
  // (pair_sources[pair_indptr[p] .. pair_indptr[p + 1]), a duplicate edge twice).
  std::vector<int64_t> pair_row;
  std::vector<int32_t> pair_relation;
  std::vector<int64_t> pair_degree;
  std::vector<int64_t> pair_indptr{0};
  std::vector<int32_t> pair_sources;

  int64_t num_pairs() const { return static_cast<int64_t>(pair_row.size()); }
};

// Collective: every rank of `comm` (whose rank and size must be the part's, heterogeneous) lists
// its destinations for each sender and builds the pairs it sends from the peers' lists. Throws
// Error for inconsistent lists from a peer.
RelationFirstLayout relation_first_layout(const Part& part, Communicator& comm);

}  // namespace adaqp
