// Building every rank's part from the ranks' graph slices (graph/graph_slice.h) and the owner of
// each node, with all-to-all exchanges only: the distributed twin of build_part (part.h), so that
// no rank holds more than its slice and its part.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/graph/graph_slice.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct SlicedPart {
  Part part;
  int64_t edge_cut = 0;     // edge_cut (assign_parts.h) of the whole graph, all ranks together
  int64_t bytes_moved = 0;  // nodes, edges and node data sent to their owners, all ranks
};

// Collective: rank r gets build_part(g, owner, r) of the graph g the slices form, array for array,
// where `slice_owner` holds the owners of this slice's nodes in [0, comm.size()) (one part per
// rank; every part non-empty).
SlicedPart build_part_from_slices(const GraphSlice& s, const std::vector<int32_t>& slice_owner,
                                  Communicator& comm);

}  // namespace adaqp
