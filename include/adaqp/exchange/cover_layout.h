// The cover layout of a worker's halo exchanges (communication.exchange: cover; boundary.h,
// boundary_cover.h, docs/design.md section 4). A cut edge j -> i travels either as the source row
// h_j or inside a partial sum for i that the sender computes over exactly the pair's cut edges into
// i that no source row carries; per (sender, receiver) pair the rows are a minimum vertex cover of
// the pair's cut edges. The receiver knows every cut edge into it, so it computes the cover of each
// pair and tells the sender which rows to send: one start-up exchange, no partition format change.
//
// Forward: the sender sends S h (S below: a source row is h_j, a partial row sum_j a_ij h_j); the
// receiver adds A'_halo times the received rows (a source row's coefficient is the edge's, a
// partial row's is 1). Backward mirrors it: the receiver sends A'_halo^T g, the sender adds
// S^T times what arrives. The coefficients a_ij are the model's (EdgeNorm), so the layout keeps the
// degrees they are made from.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/boundary.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct CoverLayout {
  Boundary boundary;
  // Receiver: A'_halo in CSR, a row per owned node, a column per received row (columns ascending
  // within a row). recv_out_degree[c] is the out-degree of source row c's node, or -1 for a
  // partial sum (coefficient 1).
  std::vector<int64_t> halo_indptr;
  std::vector<int32_t> halo_indices;
  std::vector<int64_t> recv_out_degree;
  // Sender: S in CSR, a row per sent row (send order), columns owned rows. send_dst_in_degree[k] is
  // the in-degree of partial row k's destination (its coefficients come from it and each column's
  // out-degree), or -1 for a source row (one entry, coefficient 1).
  std::vector<int64_t> send_indptr;
  std::vector<int32_t> send_indices;
  std::vector<int64_t> send_dst_in_degree;
};

// Collective: every rank of `comm` (whose rank and size must be the part's) computes its pairs'
// covers and tells each sender its rows. Throws Error for inconsistent messages from a peer.
CoverLayout cover_layout(const Part& part, Communicator& comm);

}  // namespace adaqp
