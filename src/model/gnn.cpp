#include "adaqp/model/gnn.h"

#include <ATen/ATen.h>

#include <string>

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

at::Tensor GnnImpl::forward(DistGraph& graph, const ForwardMode& mode) {
  ADAQP_CHECK(graph.aggregation() == aggregation_for_model(opt_.type),
              "graph aggregation does not match model type " + opt_.type);
  const Part& part = graph.part();
  ADAQP_CHECK(part.feat_dim == opt_.in_dim, "features have " + std::to_string(part.feat_dim) +
                                                " columns, model expects " +
                                                std::to_string(opt_.in_dim));
  const int64_t n = part.num_owned();
  const bool sage = !root_.empty();
  const bool drop = mode.training && opt_.dropout > 0;
  // The features are read-only here: no gradient flows back to them.
  at::Tensor h = at::from_blob(const_cast<float*>(part.features.data()), {n, part.feat_dim},
                               at::TensorOptions().dtype(at::kFloat));
  for (int l = 0; l < opt_.layers; ++l) {
    at::Tensor z;
    if (l == 0) {
      z = at::empty({n, part.feat_dim}, h.options());
      graph.aggregate_features(z.data_ptr<float>());
    } else {
      z = dist_aggregate(h, graph, l);
    }
    at::Tensor root = sage ? h : at::Tensor();
    if (drop) {
      const int64_t d = h.size(1);
      at::Tensor mask = at::empty({n, sage ? 2 * d : d}, h.options());
      DropoutKey key = mode.key;
      key.layer = static_cast<uint32_t>(l);
      dropout_mask(key, static_cast<float>(opt_.dropout), part.owned_gid.data(), n, mask.size(1),
                   mask.data_ptr<float>());
      z = z * mask.narrow(1, 0, d);
      if (sage) root = root * mask.narrow(1, d, d);
    }
    at::Tensor y = neighbour_[l]->forward(z);
    if (sage) y = y + root_[l]->forward(root);
    if (l + 1 < opt_.layers) {
      if (opt_.layer_norm) y = norm_[l]->forward(y);
      y = at::relu(y);
    }
    h = y;
  }
  return h;
}

}  // namespace adaqp
