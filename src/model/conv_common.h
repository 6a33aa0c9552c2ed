// What the linear graph-convolution layers (GCN, GraphSAGE) share: the order of aggregation and
// dense product, and layer 0 over the cached A X. Private to src/model.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/modules/linear.h>

#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/layer_exchange.h"

namespace adaqp::conv_detail {

// A layer's Linear (in -> out) initialised as the reference's DistGCNConv, DGL's GraphConv and
// PyG's GCNConv and GATConv are: weights Glorot-uniform (bound sqrt(6 / (in + out))), bias zero.
// libtorch's default draws smaller weights and non-zero biases, which trains GCN measurably slower
// per epoch than the systems it is compared with. GraphSAGE keeps that default (sage_conv.cpp).
torch::nn::Linear glorot_linear(int64_t in, int64_t out, bool bias);

// The exchanges of these layers: layer 0 the features' rows forward (A X); a later layer the
// narrower of its input and output rows (the order aggregate_linear picks), both ways.
LayerExchange linear_exchange(int layer, int64_t in, int64_t out);

// Layer 0: (A X * mask) W^T + b [+ (X * mask') R^T when `root` is defined], A X the graph's cached
// aggregated features (dense, or sparse: DistGraph::sparse_features), the masks drawn from
// `dropout` (one row of mask, mask' per node).
at::Tensor features_linear(DistGraph& graph, const FeatureDropout& dropout,
                           const torch::nn::Linear& neighbour, const at::Tensor& root);

// Layer l >= 1: A (h W^T) + b when the layer narrows (out < in), else (A h) W^T + b as one
// operation (dist_aggregate_linear), the cheaper order aggregating the narrower rows; plus h R^T
// when `root` is defined.
at::Tensor aggregate_linear(DistGraph& graph, const at::Tensor& h, int layer, bool recompute,
                            const torch::nn::Linear& neighbour, const at::Tensor& root);

}  // namespace adaqp::conv_detail
