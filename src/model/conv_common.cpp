#include "conv_common.h"

#include <algorithm>

#include <ATen/ATen.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include "adaqp/common/error.h"
#include "adaqp/model/dist_aggregate.h"

namespace adaqp::conv_detail {

LayerExchange linear_exchange(int layer, int64_t in, int64_t out) {
  if (layer == 0) return LayerExchange{in, /*features=*/true, /*backward=*/false};
  return LayerExchange{std::min(in, out), /*features=*/false, /*backward=*/true};
}

torch::nn::Linear glorot_linear(int64_t in, int64_t out, bool bias) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out).bias(bias));
  const torch::NoGradGuard no_grad;
  torch::nn::init::xavier_uniform_(linear->weight);
  if (bias) torch::nn::init::zeros_(linear->bias);
  return linear;
}

at::Tensor features_linear(DistGraph& graph, const FeatureDropout& dropout,
                           const torch::nn::Linear& neighbour, const at::Tensor& root) {
  const int64_t d = neighbour->weight.size(1);
  if (const SparseFeatures* az = graph.sparse_aggregated_features()) {
    const at::Tensor& gids = graph.owned_gids();
    at::Tensor y = sparse_dropout_linear(*az, draw_sparse_dropout(dropout, *az, gids, 0),
                                         neighbour->weight, neighbour->bias);
    if (!root.defined()) return y;
    // The root term's mask is elements d .. 2d - 1 of a node's mask row, as below.
    const SparseFeatures* x = graph.sparse_features();
    ADAQP_CHECK(x != nullptr, "a root term over X, which the graph did not keep");
    return y +
           sparse_dropout_linear(*x, draw_sparse_dropout(dropout, *x, gids, d), root, at::Tensor());
  }
  const at::Tensor& z = graph.aggregate_features();
  const DropoutMask mask = draw_dropout(dropout, graph.owned_gids(), root.defined() ? 2 * d : d);
  const at::Tensor x = root.defined() ? graph.features() : at::Tensor();
  if (mask.bits.defined()) {
    return dropout_linear(z, x, mask, neighbour->weight, neighbour->bias, root);
  }
  at::Tensor y = neighbour.ptr()->forward(z);
  if (root.defined()) y = y + at::matmul(x, root.t());
  return y;
}

at::Tensor aggregate_linear(DistGraph& graph, const at::Tensor& h, int layer, bool recompute,
                            const torch::nn::Linear& neighbour, const at::Tensor& root) {
  const at::Tensor& w = neighbour->weight;
  if (w.size(0) < w.size(1)) {
    at::Tensor y = dist_aggregate(at::matmul(h, w.t()), graph, layer) + neighbour->bias;
    if (root.defined()) y = y + at::matmul(h, root.t());
    return y;
  }
  // The root term is computed inside, while the boundary rows travel.
  return dist_aggregate_linear(h, w, neighbour->bias, root, graph, layer, recompute);
}

}  // namespace adaqp::conv_detail
