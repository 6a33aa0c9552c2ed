#include "adaqp/model/gnn.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <string>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

GnnImpl::GnnImpl(const GnnOptions& opt) : opt_(opt) {
  ADAQP_CHECK(opt.layers >= 1 && opt.in_dim >= 1 && opt.hidden >= 1 && opt.out_dim >= 1,
              "model shape: layers " + std::to_string(opt.layers) + ", in " +
                  std::to_string(opt.in_dim) + ", hidden " + std::to_string(opt.hidden) + ", out " +
                  std::to_string(opt.out_dim));
  for (int l = 0; l < opt.layers; ++l) {
    const int64_t in = l == 0 ? opt.in_dim : opt.hidden;
    const int64_t out = l + 1 == opt.layers ? opt.out_dim : opt.hidden;
    const std::string p = "layer" + std::to_string(l);
    const int heads = l + 1 == opt.layers ? 1 : opt.heads;
    conv_.push_back(
        make_conv(opt.type, *this, p, ConvShape{in, out, heads, opt.relations, opt.bases}));
    if (opt.layer_norm && l + 1 < opt.layers) {
      norm_.push_back(
          register_module(p + "_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({out}))));
    }
  }
}

LayerExchange GnnImpl::exchange(int layer) const {
  ADAQP_CHECK(layer >= 0 && layer < opt_.layers, "layer " + std::to_string(layer));
  return conv_[layer]->exchange(layer);
}

at::Tensor GnnImpl::forward(DistGraph& graph, const ForwardMode& mode) {
  ADAQP_CHECK(&graph.norm() == &conv_norm(opt_.type),
              std::string("the graph's adjacency is not normalised as model type ") +
                  to_string(opt_.type) + " aggregates");
  const Part& part = graph.part();
  ADAQP_CHECK_EQ(part.feat_dim, opt_.in_dim, "feature columns, the model's input width");
  // Layer l's dropout of probability p, none outside training.
  const auto draw = [&](int l, double p) {
    DropoutDraw drop;
    if (mode.training && p > 0) {
      drop.key = mode.key;
      drop.key.layer = static_cast<uint32_t>(l);
      drop.p = static_cast<float>(p);
    }
    return drop;
  };
  const auto edge_dropout = [&](int l) { return EdgeDropout{draw(l, opt_.attention_dropout)}; };
  at::Tensor h;
  for (int l = 0; l < opt_.layers; ++l) {
    GraphConv& conv = *conv_[l];
    at::Tensor y = l == 0 ? conv.forward_features(graph, FeatureDropout{draw(0, opt_.dropout)},
                                                  edge_dropout(0))
                          : conv.forward(graph, h, l, opt_.recompute_aggregations, edge_dropout(l));
    h = at::Tensor();  // this layer's input is no longer needed here
    if (l + 1 < opt_.layers) {
      if (opt_.layer_norm) y = norm_[l]->forward(y);
      // ReLU, then the next layer's dropout, in place (nothing saved y itself for backward).
      y = mode.training ? relu_dropout_(y, draw_dropout(draw(l + 1, opt_.dropout),
                                                        graph.owned_gids(), y.size(1)))
                        : y.relu_();
    }
    h = std::move(y);
  }
  return h;
}

}  // namespace adaqp
