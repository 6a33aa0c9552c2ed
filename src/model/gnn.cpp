#include "adaqp/model/gnn.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/model/dist_aggregate.h"

namespace adaqp {

GnnImpl::GnnImpl(const GnnOptions& opt) : opt_(opt) {
  ADAQP_CHECK(opt.layers >= 1 && opt.in_dim >= 1 && opt.hidden >= 1 && opt.out_dim >= 1,
              "model shape: layers " + std::to_string(opt.layers) + ", in " +
                  std::to_string(opt.in_dim) + ", hidden " + std::to_string(opt.hidden) + ", out " +
                  std::to_string(opt.out_dim));
  const bool sage = aggregation_for_model(opt.type) == Aggregation::kMean;
  for (int l = 0; l < opt.layers; ++l) {
    const int64_t in = l == 0 ? opt.in_dim : opt.hidden;
    const int64_t out = l + 1 == opt.layers ? opt.out_dim : opt.hidden;
    const std::string p = "layer" + std::to_string(l);
    neighbour_.push_back(register_module(p + "_neighbour", torch::nn::Linear(in, out)));
    if (sage) {
      root_.push_back(register_module(
          p + "_root", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false))));
    }
    if (opt.layer_norm && l + 1 < opt.layers) {
      norm_.push_back(
          register_module(p + "_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}))));
    }
  }
}

int64_t GnnImpl::in_width(int layer) const {
  return layer == 0 ? opt_.in_dim : opt_.hidden;
}

int64_t GnnImpl::out_width(int layer) const {
  return layer + 1 == opt_.layers ? opt_.out_dim : opt_.hidden;
}

int64_t GnnImpl::aggregation_width(int layer) const {
  ADAQP_CHECK(layer >= 0 && layer < opt_.layers, "layer " + std::to_string(layer));
  return layer == 0 ? opt_.in_dim : std::min(in_width(layer), out_width(layer));
}

at::Tensor GnnImpl::forward(DistGraph& graph, const ForwardMode& mode) {
  ADAQP_CHECK(graph.aggregation() == aggregation_for_model(opt_.type),
              "graph aggregation does not match model type " + opt_.type);
  const Part& part = graph.part();
  ADAQP_CHECK(part.feat_dim == opt_.in_dim, "features have " + std::to_string(part.feat_dim) +
                                                " columns, model expects " +
                                                std::to_string(opt_.in_dim));
  const bool sage = !root_.empty();
  const bool drop = mode.training && opt_.dropout > 0;
  // Layer l's dropout mask, `width` elements per row (none without dropout).
  const auto mask = [&](int l, int64_t width) {
    if (!drop) return DropoutMask{};
    DropoutKey key = mode.key;
    key.layer = static_cast<uint32_t>(l);
    return draw_dropout(key, static_cast<float>(opt_.dropout), graph.owned_gids(), width);
  };
  at::Tensor h;
  for (int l = 0; l < opt_.layers; ++l) {
    at::Tensor y;
    if (l == 0) {
      // A X and X are constants: no gradient flows back to them.
      const at::Tensor& z = graph.aggregate_features();
      const at::Tensor x = sage ? graph.features() : at::Tensor();
      const at::Tensor root = sage ? root_[0]->weight : at::Tensor();
      if (drop) {
        y = dropout_linear(z, x, mask(0, sage ? 2 * opt_.in_dim : opt_.in_dim),
                           neighbour_[0]->weight, neighbour_[0]->bias, root);
      } else {
        y = neighbour_[0]->forward(z);
        if (sage) y = y + root_[0]->forward(x);
      }
    } else {
      torch::nn::Linear& lin = neighbour_[l];
      if (out_width(l) < in_width(l)) {
        y = dist_aggregate(at::matmul(h, lin->weight.t()), graph, l) + lin->bias;
        if (sage) y = y + root_[l]->forward(h);
      } else {
        // GraphSAGE's root term is computed inside, while the boundary rows travel.
        y = dist_aggregate_linear(h, lin->weight, lin->bias, sage ? root_[l]->weight : at::Tensor(),
                                  graph, l, opt_.recompute_aggregations);
      }
    }
    h = at::Tensor();  // this layer's input is no longer needed here
    if (l + 1 < opt_.layers) {
      if (opt_.layer_norm) y = norm_[l]->forward(y);
      // ReLU, then the next layer's dropout, in place (nothing saved y itself for backward).
      y = mode.training ? relu_dropout_(y, mask(l + 1, y.size(1))) : y.relu_();
    }
    h = std::move(y);
  }
  return h;
}

}  // namespace adaqp
