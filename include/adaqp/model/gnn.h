// The GNN model: L layers of one uniform definition (GCN or GraphSAGE-mean). Layer l with input
// H (owned rows, width d):
//   Z = A H                   (GCN: A_hat, symmetric normalisation; SAGE: mean of in-neighbours)
//   Z = Z * mask              (training only; masks keyed by seed, epoch, layer, global node id)
//   Y = Z W + b               (SAGE: Y = Z W_n + (H * mask_root) W_r + b)
//   hidden layers only: Y = ReLU(LayerNorm(Y)) (LayerNorm when enabled).
// Layer 0's input is the feature matrix, so its halo rows are static (and cacheable) and no
// gradient flows back to it. For SAGE the dropout mask of a row has 2d elements: the first d for
// Z, the last d for the root term.
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

 private:
  GnnOptions opt_;
  std::vector<torch::nn::Linear> neighbour_;  // W (GCN) or W_n (SAGE), with the bias
  std::vector<torch::nn::Linear> root_;       // SAGE only: W_r, no bias
  std::vector<torch::nn::LayerNorm> norm_;    // hidden layers, when layer_norm
};
TORCH_MODULE(Gnn);

}  // namespace adaqp
