// The GNN model: L graph-convolution layers of one type (model.type; the layers are in conv.h),
// with A the adjacency normalised as that type's layers aggregate.
// Layer 0, input the feature matrix X: over Z = A X, in training Z * mask (GraphSAGE: and X *
// mask_root), then the layer's dense part. Layer l >= 1, input H (the previous layer's output), in
// training H * mask, then the layer (it aggregates H W when it narrows, else H, whichever rows are
// narrower). Hidden layers then apply Y = ReLU(LayerNorm(Y)) (LayerNorm when enabled). This is Kipf
// & Welling's GCN (dropout on every layer's input, before the aggregation), except that layer 0
// drops elements of the aggregated features A X instead of X: A X depends only on the static
// features, so its halo rows are exchanged once and cached, and no gradient flows back to it.
// GAT's layer 0 drops elements of X itself (its rows are transformed before they travel); with
// attention_dropout its layers also drop attention weights. Masks are keyed by seed, epoch, layer
// and global node id (an edge's: both of its ends).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/gnn_options.h"
#include "adaqp/model/layer_exchange.h"

namespace adaqp {

// What one forward pass does: training (dropout on, keyed by `key`) or evaluation.
struct ForwardMode {
  bool training = false;
  DropoutKey key;  // key.layer is set per layer
};

class GnnImpl : public torch::nn::Module {
 public:
  // Parameters are drawn from libtorch's global generator (seed it first for reproducibility).
  explicit GnnImpl(const GnnOptions& opt);

  // Logits of the owned nodes (num_owned x out_dim). Collective: exchanges halo rows.
  at::Tensor forward(DistGraph& graph, const ForwardMode& mode);

  const GnnOptions& options() const { return opt_; }
  // This rank's embedding rows (InputEmbedding; undefined without): a parameter of this rank's
  // own, not among parameters() (whose gradients every rank all-reduces and checkpoints hold);
  // moved with the module (a buffer).
  const at::Tensor& local_embedding() const { return embedding_; }
  // The halo exchanges of layer `layer` in a training epoch (its layer's) on a graph of options
  // `graph`, from which the bytes of an epoch and the logs are computed.
  LayerExchange exchange(int layer, DistGraphOptions graph) const;

 private:
  GnnOptions opt_;
  std::vector<std::unique_ptr<GraphConv>> conv_;
  std::vector<torch::nn::LayerNorm> norm_;  // hidden layers, when layer_norm
  at::Tensor embedding_, embedding_rows_;
};
TORCH_MODULE(Gnn);

}  // namespace adaqp
