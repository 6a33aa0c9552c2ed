// The GNN model: L layers of one uniform definition (GCN or GraphSAGE-mean), with A the
// normalised adjacency (GCN: A_hat, symmetric normalisation; SAGE: mean of in-neighbours).
// Layer 0, input the feature matrix X:
//   Z = A X, then in training Z = Z * mask (SAGE: and X * mask_root)
//   Y = Z W + b                            (SAGE: + (X * mask_root) W_r)
// Layer l >= 1, input H (the previous layer's output):
//   in training H = H * mask
//   Y = A (H W) + b  when the layer narrows (out < in), else (A H) W + b  (equal; the cheaper
//                    order aggregates the narrower rows)   (SAGE: + H W_r)
// Hidden layers then apply Y = ReLU(LayerNorm(Y)) (LayerNorm when enabled). A layer that aggregates
// first runs (A H) W + b as one operation (dist_aggregate_linear), whose backward computes dW and
// db while the halo partial gradients travel. This is Kipf & Welling's GCN (dropout on every
// layer's input, before the aggregation), except that layer 0 drops elements of the aggregated
// features A X instead of X: A X depends only on the static features, so its halo rows are
// exchanged once and cached, and no gradient flows back to it. Masks are keyed by seed, epoch,
// layer and global node id; for SAGE's layer 0 a row's mask has 2d elements, the first d for Z, the
// last d for the root term.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"

namespace adaqp {

struct GnnOptions {
  std::string type = "gcn";  // gcn | sage
  int layers = 2;
  int64_t in_dim = 0;
  int64_t hidden = 16;
  int64_t out_dim = 0;
  double dropout = 0.5;
  bool layer_norm = false;
  // Layers that aggregate first keep their input and received halo rows instead of A h, and
  // recompute A h in backward (training.recompute: aggregations).
  bool recompute_aggregations = false;
};

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
  // Width of the rows layer l aggregates (and exchanges): in_dim for layer 0; for a later layer
  // the narrower of its input and output widths.
  int64_t aggregation_width(int layer) const;

 private:
  GnnOptions opt_;
  std::vector<torch::nn::Linear> neighbour_;  // W (GCN) or W_n (SAGE), with the bias
  std::vector<torch::nn::Linear> root_;       // SAGE only: W_r, no bias
  std::vector<torch::nn::LayerNorm> norm_;    // hidden layers, when layer_norm

  int64_t in_width(int layer) const;
  int64_t out_width(int layer) const;
};
TORCH_MODULE(Gnn);

}  // namespace adaqp
