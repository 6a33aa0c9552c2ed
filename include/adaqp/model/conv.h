// Graph-convolution layers over the distributed aggregation (dist_aggregate.h), one file per
// layer type (src/model/<type>_conv.cpp) plus a line in the registry (conv.cpp):
//   gcn   Y = A_gcn H W + b                 (A_gcn: symmetric normalisation, GCN)
//   sage  Y = A_mean H W_n + b + H W_r      (A_mean: mean of in-neighbours, GraphSAGE-mean)
//   gat   Y = A_att H W + b                  (A_att: attention over in-neighbours, per head; GAT)
//   rgcn  Y = H W_0 + b + sum_r A_r H W_r    (A_r: mean over in-neighbours of relation r; R-GCN)
// A layer type's edge normalisation (EdgeNorm, dist_graph.h) is defined in its file and given to
// the DistGraph the model runs on, which builds its adjacency with it (GnnImpl checks). A layer
// registers its parameters on the model that owns it, under names prefixed by its layer
// ("layer<l>_neighbour", "layer<l>_root"), so that checkpoints name every parameter alike whatever
// the layer type.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>

#include "adaqp/common/choices.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/layer_exchange.h"

namespace adaqp {

class GraphConv {
 public:
  virtual ~GraphConv() = default;

  // The edge normalisation of its aggregation.
  virtual const EdgeNorm& norm() const = 0;
  // Layer 0, over the constant input features (GCN and GraphSAGE: the aggregated A X, and X;
  // GAT: X): no gradient flows back to them.
  // `dropout` drops elements of its inputs (the layer draws the mask it needs: kernels/dropout.h
  // keys it by global node id and element, wherever the rows sit). `edge_dropout` drops edge
  // weights where a layer weighs its edges (GAT's attention; the configuration refuses it for the
  // others).
  virtual at::Tensor forward_features(DistGraph& graph, const FeatureDropout& dropout,
                                      const EdgeDropout& edge_dropout) = 0;
  // Layer `layer` >= 1 over h (num_owned x in). Collective: exchanges h's boundary rows (or
  // those of h W when the layer narrows). `recompute`: training.recompute aggregations.
  virtual at::Tensor forward(DistGraph& graph, const at::Tensor& h, int layer, bool recompute,
                             const EdgeDropout& edge_dropout) = 0;
  // What it exchanges in a training epoch as layer `layer` on a graph of options `graph` (its
  // layout and feature cache).
  virtual LayerExchange exchange(int layer, const DistGraphOptions& graph) const = 0;
};

// The shape of one layer: `in` to `out` features; gat: in `heads` heads of out / heads features;
// rgcn: one weight per relation of `relations`, each a combination of `bases` shared ones when
// bases > 0.
struct ConvShape {
  int64_t in = 0;
  int64_t out = 0;
  int heads = 1;
  int relations = 0;
  int bases = 0;
};

// The layer of `type` and `shape`, registering its parameters on `owner` under `prefix`
// ("layer<l>"); parameters are drawn from libtorch's global generator.
std::unique_ptr<GraphConv> make_conv(ModelType type, torch::nn::Module& owner,
                                     const std::string& prefix, const ConvShape& shape);

// The edge normalisation the layers of `type` aggregate with (what the DistGraph must be given);
// one object per layer type.
const EdgeNorm& conv_norm(ModelType type);
// The graph context the layers of `type` run on, from the job's choices in `choices` (device,
// exchange layout, overlap, feature cache, sparse features): the type's normalisation (norm), the
// input features X kept where layer 0 reads them itself (GraphSAGE's root term, GAT, R-GCN), the
// feature cache only where layer 0 aggregates X (attention weighs transformed rows instead; R-GCN
// caches it per relation), and products only where the layers multiply by A (attention reads only
// A's pattern).
DistGraphOptions graph_options_for(ModelType type, DistGraphOptions choices);

}  // namespace adaqp
