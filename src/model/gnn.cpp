#include "adaqp/model/gnn.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "adaqp/kernels/dropout.h"

namespace adaqp {

namespace {

// The embedding's starting rows (InputEmbedding): uniform in +-sqrt(3) from (seed, gid, column).
at::Tensor initial_embedding(const InputEmbedding& e, int64_t width) {
  const auto n = static_cast<int64_t>(e.gids.size());
  at::Tensor t = at::empty({n, width}, at::kFloat);
  float* out = t.data_ptr<float>();
  const double half_width = std::sqrt(3.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < width; ++c) {
      const PhiloxWords w =
          philox_block(e.seed, 0, 0, RngStream::kInit, static_cast<uint64_t>(e.gids[i]),
                       static_cast<uint32_t>(c / 4));
      const double u = (static_cast<double>(w.v[c % 4]) + 0.5) / 4294967296.0;
      out[i * width + c] = static_cast<float>((2 * u - 1) * half_width);
    }
  }
  return t;
}

// The scales of `drop` over rows with global ids `gids` (n x width: 0 or 1 / (1 - p)), as a
// tensor autograd multiplies by, or undefined without dropout.
at::Tensor dropout_scales(const DropoutDraw& drop, const at::Tensor& gids, int64_t width,
                          const Device& device) {
  const DropoutMask mask = draw_dropout(drop, gids, width);
  if (!mask.bits.defined()) return at::Tensor();
  const at::Tensor ones = at::ones({gids.size(0), width}, gids.options().dtype(at::kFloat));
  at::Tensor scales = at::empty_like(ones);
  kernels::apply_mask(device, ones.data_ptr<float>(), gids.size(0), width, mask.view(),
                      /*relu=*/false, scales.data_ptr<float>(), nullptr);
  return scales;
}

}  // namespace

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
  if (opt.embedding.enabled) {
    ADAQP_CHECK(opt.embedding.rows.size() == opt.embedding.gids.size(),
                "an input embedding's rows and global ids");
    embedding_rows_ = register_buffer(
        "embedding_rows", at::tensor(at::ArrayRef<int64_t>(opt.embedding.rows), at::kLong));
    embedding_ = register_buffer("local_embedding", initial_embedding(opt.embedding, opt.in_dim));
    embedding_.requires_grad_(true);
  }
}

LayerExchange GnnImpl::exchange(int layer, DistGraphOptions graph) const {
  ADAQP_CHECK(layer >= 0 && layer < opt_.layers, "layer " + std::to_string(layer));
  // Learned input rows are no constant features: nothing of them is cached.
  if (embedding_.defined()) graph.cache_features = false;
  LayerExchange e = conv_[layer]->exchange(layer, graph);
  if (layer == 0 && embedding_.defined()) {
    // The input rows hold learned embeddings: their gradients travel back like any layer's.
    e.features = false;
    e.backward = true;
  }
  e.cached = e.features && graph.cache_features;
  return e;
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
  if (embedding_.defined()) {
    // The featureless rows of X replaced by the embedding, then layer 0's dropout on all of it.
    h = graph.features().index_copy(0, embedding_rows_, embedding_);
    const at::Tensor scales =
        dropout_scales(draw(0, opt_.dropout), graph.owned_gids(), h.size(1), graph.device());
    if (scales.defined()) h = h * scales;
  }
  for (int l = 0; l < opt_.layers; ++l) {
    GraphConv& conv = *conv_[l];
    at::Tensor y =
        l == 0 && !h.defined()
            ? conv.forward_features(graph, FeatureDropout{draw(0, opt_.dropout)}, edge_dropout(0))
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
