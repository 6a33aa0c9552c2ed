// Distributed aggregation Y = A H as a libtorch autograd operation (design notes, section 4).
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

}  // namespace adaqp
