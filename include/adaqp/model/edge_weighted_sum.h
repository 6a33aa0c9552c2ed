// GAT's weighted sum over in-edges (model/gat_conv.cpp), as a differentiable op that works on
// chunks of edges, so that no E x width tensor exists.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace adaqp {

// Floats (edges x heads x features) of one chunk.
constexpr int64_t kEdgeChunkFloats = int64_t{1} << 24;

// y_i = sum over the edges e with dst_e = i of alpha_e z_{src_e - first}, per head: alpha
// (E x heads), z (rows x heads x f; source `first` is its row 0), y (n x heads x f); gradients
// flow to alpha and z. Edges are taken in order, `chunk_floats` / (heads x f) of them at a time
// (at least one): the chunking changes no value.
at::Tensor edge_weighted_sum(const at::Tensor& alpha, const at::Tensor& z, const at::Tensor& dst,
                             const at::Tensor& src, int64_t n, int64_t first,
                             int64_t chunk_floats = kEdgeChunkFloats);

}  // namespace adaqp
