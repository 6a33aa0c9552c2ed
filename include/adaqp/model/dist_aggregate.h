// Distributed aggregation Y = A H as a libtorch autograd operation (docs/design.md, section 4).
// Forward exchanges the boundary rows of H; backward computes dL/dH = A^T dL/dY, sending the halo
// partial gradients to their owners. Both directions are collective: every rank must run the same
// layers in the same order.
#pragma once

#include <ATen/core/Tensor.h>

#include "adaqp/model/dist_graph.h"

namespace adaqp {

// h: float32 tensor on the graph's device, num_owned x d rows of the owned nodes. Returns A h
// (num_owned x d).
at::Tensor dist_aggregate(const at::Tensor& h, DistGraph& graph, int layer);

// (A h) W^T + b [+ h R^T]: a Linear (weight out x d, bias out) after the aggregation, plus, when
// `root` (out x d) is defined, GraphSAGE's root term, in one operation that computes the central
// rows' product and the root term while the boundary rows travel, and whose backward computes the
// weight, bias and root gradients while the halo partial gradients travel (the overlap of
// docs/design.md, section 4, extended to the dense layer). Forward results equal
// Linear(dist_aggregate(h))
// [+ h R^T]. For backward it keeps A h (and h with a root term); with `recompute`, h and the halo
// rows it received instead, making A h again in backward (the same products: identical values).
at::Tensor dist_aggregate_linear(const at::Tensor& h, const at::Tensor& weight,
                                 const at::Tensor& bias, const at::Tensor& root, DistGraph& graph,
                                 int layer, bool recompute = false);

// For layers that weigh the edges themselves (attention; rows layout): begin starts the exchange
// of the boundary rows of h (num_owned x d, contiguous, untouched until end) for layer `layer`
// (DistGraph::begin_halo_rows) and returns h for the caller's further work; end, given that
// tensor, waits and returns the received rows of the halo nodes (received rows x d). The caller
// can work on the central rows in between. Backward mirrors it: end's backward starts sending the
// received rows' gradients to their owners, begin's (after every use of its output) adds what
// arrived into h's gradient, so the owned rows' backward work overlaps that exchange.
[[nodiscard]] at::Tensor dist_halo_rows_begin(const at::Tensor& h, DistGraph& graph, int layer);
at::Tensor dist_halo_rows_end(const at::Tensor& h, DistGraph& graph, int layer);
// For layers that form the rows they send (the relation_first layout): begin starts the exchange
// of `rows` (sent rows x d, in send order) and returns them, for dist_halo_rows_end, which returns
// the received rows. Backward: end's starts returning the received rows' gradients, begin's waits
// for them and passes them to the rows' own backward (the layer's sender-side products).
[[nodiscard]] at::Tensor dist_formed_rows_begin(const at::Tensor& rows, DistGraph& graph,
                                                int layer);

}  // namespace adaqp
