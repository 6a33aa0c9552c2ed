// R-GCN (Schlichtkrull et al., 2018), as PyG's RGCNConv with mean aggregation:
//   y_i = h_i W_0 + b + sum_r mean over the relation-r in-neighbours j of i of h_j W_r
// with W_r = sum_b c_rb V_b under the basis decomposition (model.num_bases > 0). Every relation is
// aggregated first, over the pairs of model/relation_adjacency.h (z_(i,r), in wide), then
// transformed by its W_r and summed into its node. What travels depends on the layout:
//   rows:           the input rows h, as wide as the layer's input, forward (and their gradients
//                   back from layer 1 on);
//   relation_first: rows transformed by W_r before they travel, at the layer's output width: a
//                   minimum cover of transformed source rows and destinations' partial sums
//                   (exchange/relation_first_layout.h), forward and back (the sender takes its
//                   W_r gradients from what returns).
// The owned rows' products and the root term run while the rows travel. With the feature cache,
// layer 0 reads its aggregation of the constant features per pair, made once at start-up
// (DistGraph::relation_features): no exchange and no product over the adjacency per epoch; its
// dropout then drops X in the root term only, where PyG's drops X before aggregating (the cache
// off).
// Parameters are initialised as PyG's: Glorot-uniform weights, bases and coefficients, bias zero.
#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/custom_class.h>
#include <torch/utils.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/kernels/dropout.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_aggregate.h"
#include "adaqp/model/relation_adjacency.h"
#include "conv_common.h"
#include "convs.h"

namespace adaqp::conv_detail {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A block and its transpose, for the product's backward (the graph that holds them outlives the
// autograd graph: the trainer owns both).
struct BlockRef : torch::CustomClassHolder {
  BlockRef(AdjacencyBlock* a, AdjacencyBlock* a_t) : a(a), a_t(a_t) {}
  AdjacencyBlock* a;
  AdjacencyBlock* a_t;
};
const auto kBlockRefClass = torch::class_<BlockRef>("adaqp", "RelationBlockRef");

// y = A x for a block of the relation adjacency (rows x d from cols x d); dx = A^T dy.
struct BlockProduct : public torch::autograd::Function<BlockProduct> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, AdjacencyBlock* a,
                            AdjacencyBlock* a_t) {
    ctx->saved_data["ref"] = c10::make_intrusive<BlockRef>(a, a_t);
    return multiply(*a, x.contiguous());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto ref = ctx->saved_data["ref"].toCustomClass<BlockRef>();
    return {multiply(*ref->a_t, grad_outputs[0].contiguous()), at::Tensor(), at::Tensor()};
  }

  static at::Tensor multiply(AdjacencyBlock& a, const at::Tensor& x) {
    const kernels::CsrView& v = a.view();
    ADAQP_CHECK_EQ(x.size(0), v.cols, "rows of a relation block's input");
    // An empty block (no such edges on this rank; no halo at W = 1) multiplies nothing.
    if (v.indptr[v.rows] == 0 || x.size(1) == 0) return at::zeros({v.rows, x.size(1)}, x.options());
    at::Tensor y = at::empty({v.rows, x.size(1)}, x.options());
    a.multiply(x.data_ptr<float>(), x.size(1), y.data_ptr<float>(), /*accumulate=*/false);
    return y;
  }
};

at::Tensor product(const at::Tensor& x, AdjacencyBlock& a, AdjacencyBlock& a_t) {
  return BlockProduct::apply(x, &a, &a_t);
}

// z += A x in place (z: the owned block's product; x: the received rows), so that the pairs'
// aggregation exists once; dz passes through, dx = A^T dz.
struct AccumulateProduct : public torch::autograd::Function<AccumulateProduct> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& z, const at::Tensor& x,
                            AdjacencyBlock* a, AdjacencyBlock* a_t) {
    ctx->saved_data["ref"] = c10::make_intrusive<BlockRef>(a, a_t);
    ctx->mark_dirty({z});
    const kernels::CsrView& v = a->view();
    ADAQP_CHECK(x.size(0) == v.cols && z.size(0) == v.rows && z.is_contiguous(),
                "a relation block's accumulated product");
    if (v.indptr[v.rows] > 0 && x.size(1) > 0) {
      const at::Tensor xc = x.contiguous();
      a->multiply(xc.data_ptr<float>(), xc.size(1), z.data_ptr<float>(), /*accumulate=*/true);
    }
    return z;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto ref = ctx->saved_data["ref"].toCustomClass<BlockRef>();
    const at::Tensor dz = grad_outputs[0].contiguous();
    return {dz, BlockProduct::multiply(*ref->a_t, dz), at::Tensor(), at::Tensor()};
  }
};

// t = z_r W_r for every relation r's run of pairs [offsets[r], offsets[r + 1]) (pairs x out),
// written into one tensor; backward dz_r = dt_r W_r^T, dW_r = z_r^T dt_r, computed per run.
struct RelationTransform : public torch::autograd::Function<RelationTransform> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& z, const at::Tensor& w,
                            const std::vector<int64_t>& offsets) {
    at::Tensor t = at::empty({z.size(0), w.size(2)}, z.options());
    for (size_t r = 0; r + 1 < offsets.size(); ++r) {
      at::Tensor tr = t.narrow(0, offsets[r], offsets[r + 1] - offsets[r]);
      at::mm_out(tr, z.narrow(0, offsets[r], offsets[r + 1] - offsets[r]), w[r]);
    }
    ctx->save_for_backward({z, w});
    ctx->saved_data["offsets"] = offsets;
    return t;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &z = saved[0], &w = saved[1];
    const std::vector<int64_t> offsets = ctx->saved_data["offsets"].toIntVector();
    const at::Tensor dt = grad_outputs[0].contiguous();
    at::Tensor dz = ctx->needs_input_grad(0) ? at::empty_like(z) : at::Tensor();
    // Zeros: a relation without pairs on this rank leaves its gradient to no product.
    at::Tensor dw = at::zeros_like(w);
    for (size_t r = 0; r + 1 < offsets.size(); ++r) {
      const int64_t begin = offsets[r], count = offsets[r + 1] - begin;
      at::Tensor dw_r = dw[r];
      at::mm_out(dw_r, z.narrow(0, begin, count).t(), dt.narrow(0, begin, count));
      if (dz.defined()) {
        at::Tensor dz_r = dz.narrow(0, begin, count);
        at::mm_out(dz_r, dt.narrow(0, begin, count), w[r].t());
      }
    }
    return {dz, dw, at::Tensor()};
  }
};

// Uniform in +- sqrt(6 / (rows + cols)) of the last two dimensions (PyG's glorot).
at::Tensor glorot(at::IntArrayRef sizes) {
  const torch::NoGradGuard no_grad;
  const int64_t n = static_cast<int64_t>(sizes.size());
  const double bound = std::sqrt(6.0 / static_cast<double>(sizes[n - 2] + sizes[n - 1]));
  return at::empty(sizes).uniform_(-bound, bound);
}

class RgcnConv final : public GraphConv {
 public:
  RgcnConv(torch::nn::Module& owner, const std::string& prefix, const ConvShape& s)
      : in_(s.in),
        out_(s.out),
        relations_(s.relations),
        root_(owner.register_module(prefix + "_root", glorot_linear(s.in, s.out, /*bias=*/true))) {
    ADAQP_CHECK(s.relations >= 1 && s.bases >= 0,
                "an R-GCN layer of " + std::to_string(s.relations) + " relations and " +
                    std::to_string(s.bases) + " bases");
    if (s.bases == 0) {
      weight_ = owner.register_parameter(prefix + "_relation", glorot({s.relations, s.in, s.out}));
    } else {
      bases_ = owner.register_parameter(prefix + "_bases", glorot({s.bases, s.in, s.out}));
      coefficients_ =
          owner.register_parameter(prefix + "_coefficients", glorot({s.relations, s.bases}));
    }
  }

  // The adjacency's values are not used (each relation weighs its own mean); the mean over all
  // in-neighbours stands in where the bit-width solver weighs messages.
  const EdgeNorm& norm() const override { return kMeanNorm; }

  at::Tensor forward_features(DistGraph& graph, const FeatureDropout& dropout,
                              const EdgeDropout& /*edge_dropout*/) override {
    const at::Tensor& x = graph.features();
    ADAQP_CHECK(x.defined(), "R-GCN's layer 0 reads the features dense");
    const at::Tensor dropped = masked(graph, x, graph.owned_gids(), dropout);
    if (!graph.options().cache_features) return relational(graph, dropped, 0);
    // The cached aggregation is not dropped: averaging over a pair's sources shrinks the noise
    // input dropout puts there, and dropping the average whole costs accuracy (docs/design.md).
    const PairFeatures& z = graph.relation_features();
    const at::Tensor t = RelationTransform::apply(z.rows, relation_weights(), z.offsets);
    return root_->forward(dropped) + product(t, *z.combine, *z.combine_t);
  }

  at::Tensor forward(DistGraph& graph, const at::Tensor& h, int layer, bool /*recompute*/,
                     const EdgeDropout& /*edge_dropout*/) override {
    return relational(graph, h, layer);
  }

  LayerExchange exchange(int layer, const DistGraphOptions& graph) const override {
    // Layer 0's features: cached (nothing travels per epoch) or, over rows, sent forward only.
    if (layer == 0 && (graph.cache_features || graph.exchange == ExchangeLayout::kRows))
      return LayerExchange{in_, /*features=*/true, /*backward=*/false};
    if (graph.exchange == ExchangeLayout::kRelationFirst)
      return LayerExchange{out_, /*features=*/false, /*backward=*/true};
    return LayerExchange{in_, /*features=*/false, /*backward=*/true};
  }

 private:
  // Rows `x` (global ids `gids`) with `dropout`'s keyed mask applied (x itself without dropout).
  static at::Tensor masked(DistGraph& graph, const at::Tensor& x, const at::Tensor& gids,
                           const FeatureDropout& dropout) {
    const DropoutMask mask = draw_dropout(dropout, gids, x.size(1));
    if (!mask.bits.defined()) return x;
    at::Tensor dropped = at::empty_like(x);
    kernels::apply_mask(graph.device(), x.data_ptr<float>(), x.size(0), x.size(1), mask.view(),
                        /*relu=*/false, dropped.data_ptr<float>(), nullptr);
    return dropped;
  }

  at::Tensor relational(DistGraph& graph, const at::Tensor& h, int layer) {
    ADAQP_CHECK_EQ(static_cast<int64_t>(graph.part().num_relations), relations_,
                   "relations of the part, the layer's");
    RelationAdjacency& rel = graph.relation_adjacency();
    if (rel.relation_first()) return relation_first(graph, rel, h.contiguous(), layer);
    const at::Tensor x = dist_halo_rows_begin(h.contiguous(), graph, layer);
    at::Tensor z = product(x, rel.local(), rel.local_t());
    const at::Tensor y = root_->forward(x);
    const at::Tensor halo = dist_halo_rows_end(x, graph, layer);
    z = AccumulateProduct::apply(z, halo, &rel.halo(), &rel.halo_t());
    const at::Tensor t = RelationTransform::apply(z, relation_weights(), rel.pair_offsets());
    return y + product(t, rel.combine(), rel.combine_t());
  }

  // The relation_first layout: the rows this rank sends (each its pairs aggregated over the owned
  // sources, transformed, summed) start travelling, the owned rows' terms are computed, and the
  // received rows are added into their destinations with the layout's coefficients.
  at::Tensor relation_first(DistGraph& graph, RelationAdjacency& rel, const at::Tensor& x,
                            int layer) {
    const at::Tensor w = relation_weights();
    const at::Tensor pairs =
        RelationTransform::apply(product(x, rel.send(), rel.send_t()), w, rel.send_pair_offsets());
    const at::Tensor sent = dist_formed_rows_begin(
        product(pairs, rel.send_combine(), rel.send_combine_t()), graph, layer);
    const at::Tensor t =
        RelationTransform::apply(product(x, rel.local(), rel.local_t()), w, rel.pair_offsets());
    const at::Tensor y = root_->forward(x) + product(t, rel.combine(), rel.combine_t());
    const at::Tensor received = dist_halo_rows_end(sent, graph, layer);
    return AccumulateProduct::apply(y, received, &rel.received(), &rel.received_t());
  }

  // W_r for every relation: relations x in x out.
  at::Tensor relation_weights() const {
    if (weight_.defined()) return weight_;
    return coefficients_.mm(bases_.view({bases_.size(0), -1})).view({relations_, in_, out_});
  }

  int64_t in_, out_, relations_;
  torch::nn::Linear root_;
  at::Tensor weight_, bases_, coefficients_;
};

}  // namespace

std::unique_ptr<GraphConv> make_rgcn_conv(torch::nn::Module& owner, const std::string& prefix,
                                          const ConvShape& shape) {
  return std::make_unique<RgcnConv>(owner, prefix, shape);
}

}  // namespace adaqp::conv_detail
