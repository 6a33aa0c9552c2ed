// What a trained model predicts for every node (output.predictions, docs/running.md): each rank
// has its owned nodes' rows, and rank 0 writes them as one NumPy array over all nodes, row v for
// the node of global id v (the dataset's node order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/graph/npy.h"

namespace adaqp {

// One row per owned node, in the part's local order (Part::owned_gid).
struct NodeRows {
  NpyDtype dtype = NpyDtype::kInt64;  // a fixed-size dtype (not kBytes)
  int64_t columns = 0;                // 0: one value a row, shape (N,); k > 0: shape (N, k)
  std::vector<uint8_t> bytes;         // the rows' little-endian elements, row after row

  size_t row_bytes() const;
};

// Collective over `comm`, a host transport (its buffers in host memory): every rank passes its
// owned nodes' global ids and their rows (the same dtype and columns on every rank); rank 0
// gathers them and writes one .npy of global_num_nodes rows at `path`, under a temporary name
// renamed into place, so that a failed run leaves no partial file. At its peak rank 0 holds the
// other ranks' ids and rows, the whole array and a flag a node: 9 + 2 x (row bytes) bytes a node,
// 25 with one int64 a row. InvariantError if a rank's rows do not match its ids, or (on rank 0,
// before anything is written) unless the ids of all ranks cover [0, global_num_nodes) exactly
// once; InputError naming the file if it cannot be written.
void write_node_rows(Communicator& comm, const std::vector<int64_t>& gids, int64_t global_num_nodes,
                     const NodeRows& rows, const std::string& path);

}  // namespace adaqp
