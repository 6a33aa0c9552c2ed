// The messages of one worker's halo exchanges (docs/design.md, sections 3 to 5): per peer, the rows
// a forward exchange sends (a backward one receives) and the rows it receives (a backward one
// sends), in the order both ends agree on, and a key per row that both ends give it. The codecs,
// the bit-width schemes and the solver see an exchange only through this.
//
// The layouts (communication.exchange):
//   rows:  a row per boundary node and peer, the node's embedding h_j; its key is j's global id.
//   cover: per (sender, receiver) pair, a minimum vertex cover of the pair's cut edges
//          (boundary_cover.h, exchange/cover_layout.h): the source rows of the cover, then partial
//          sums over the other cut edges, one per destination i in the cover, keyed
//          global_num_nodes * (1 + sender) + i (distinct from every global id and across senders).
//   relation_first (R-GCN): per pair, a minimum cover of transformed source rows h_j W_r, keyed
//          global_num_nodes * (1 + num_parts) + j * num_relations + r, and partial sums keyed as
//          the cover layout's (exchange/relation_first_layout.h).
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/partition/part.h"

namespace adaqp {

struct Boundary {
  int rank = 0;
  int num_parts = 1;
  // Rows to peer r (forward): [send_offsets[r], send_offsets[r + 1]); rows from peer r:
  // [recv_offsets[r], recv_offsets[r + 1]). num_parts + 1 entries each.
  std::vector<int64_t> send_offsets, recv_offsets;
  std::vector<int64_t> send_keys, recv_keys;

  int64_t sends() const { return send_offsets.back(); }
  int64_t recvs() const { return recv_offsets.back(); }
  int64_t send_count_to(int r) const { return send_offsets[r + 1] - send_offsets[r]; }
  int64_t recv_count_from(int r) const { return recv_offsets[r + 1] - recv_offsets[r]; }
};

// The rows layout of `part`: its send lists and halo blocks.
Boundary row_boundary(const Part& part);

// The key of the partial sum for destination `dst_gid` from `sender` (cover layout).
inline int64_t partial_row_key(const Part& part, int sender, int64_t dst_gid) {
  return part.global_num_nodes * (1 + static_cast<int64_t>(sender)) + dst_gid;
}

// The key of the transformed source row h_j W_r (j: `src_gid`) of the relation-first layout.
inline int64_t relation_row_key(const Part& part, int64_t src_gid, int32_t relation) {
  return part.global_num_nodes * (1 + static_cast<int64_t>(part.num_parts)) +
         src_gid * part.num_relations + relation;
}

}  // namespace adaqp
