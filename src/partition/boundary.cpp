#include "adaqp/partition/boundary.h"

namespace adaqp {

Boundary row_boundary(const Part& part) {
  Boundary b;
  b.rank = part.rank;
  b.num_parts = part.num_parts;
  b.send_offsets = part.send_offsets;
  b.recv_offsets = part.halo_offsets;
  b.send_keys.resize(part.send_idx.size());
  for (size_t k = 0; k < part.send_idx.size(); ++k)
    b.send_keys[k] = part.owned_gid[part.send_idx[k]];
  b.recv_keys = part.halo_gid;
  return b;
}

}  // namespace adaqp
