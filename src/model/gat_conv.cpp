// GAT (Velickovic et al., 2018), per head k of `heads`: z = H W, e_ij = LeakyReLU_0.2(a_dst z_i +
// a_src z_j) over the in-edges j -> i (self-loops as the dataset has them), alpha = softmax of e_ij
// over j, y_i = sum_j alpha_ij z_j + b; heads concatenated (as PyG's GATConv). Every layer
// exchanges the boundary rows of z (its output width) both ways, layer 0 included: z depends on W,
// so there is no A X to cache. Beyond a GCN layer it keeps E x heads edge tensors; the weighted sum
// and its backward run over chunks of edges (model/edge_weighted_sum.h), so that no E x width
// tensor exists. In training,
// model.attention_dropout drops attention weights after the softmax (the reference's and PyG's
// place), keyed by the edge's global ends (kernels::edge_dropout_scale).
#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_aggregate.h"
#include "adaqp/model/edge_weighted_sum.h"
#include "conv_common.h"
#include "convs.h"

namespace adaqp::conv_detail {

namespace {

constexpr double kNegativeSlope = 0.2;

// Softmax of e (E x heads) over the edges of each destination (n of them).
at::Tensor edge_softmax(const at::Tensor& e, const at::Tensor& dst, int64_t n) {
  // Each destination's largest logit, held constant (softmax does not depend on it).
  const at::Tensor max =
      at::full({n, e.size(1)}, -std::numeric_limits<float>::infinity(), e.options())
          .scatter_reduce(0, dst.unsqueeze(1).expand_as(e), e.detach(), "amax");
  const at::Tensor ex = (e - max.index_select(0, dst)).exp();
  const at::Tensor sum = at::zeros({n, e.size(1)}, e.options()).index_add(0, dst, ex);
  return ex / sum.index_select(0, dst);
}

at::Tensor glorot(int64_t rows, int64_t cols) {
  const torch::NoGradGuard no_grad;
  at::Tensor t = at::empty({rows, cols});
  torch::nn::init::xavier_uniform_(t);
  return t;
}

class GatConv final : public GraphConv {
 public:
  GatConv(torch::nn::Module& owner, const std::string& prefix, int64_t in, int64_t out, int heads)
      : in_(in),
        out_(out),
        heads_(heads),
        linear_(
            owner.register_module(prefix + "_neighbour", glorot_linear(in, out, /*bias=*/true))) {
    ADAQP_CHECK(heads >= 1 && out % heads == 0,
                std::to_string(heads) + " heads for a layer of width " + std::to_string(out));
    att_src_ = owner.register_parameter(prefix + "_att_src", glorot(heads, out / heads));
    att_dst_ = owner.register_parameter(prefix + "_att_dst", glorot(heads, out / heads));
  }

  // The adjacency's values are not used by the attention; the mean's stand in where the bit-width
  // solver weighs messages.
  const EdgeNorm& norm() const override { return kMeanNorm; }
  at::Tensor forward_features(DistGraph& graph, const FeatureDropout& dropout,
                              const EdgeDropout& edge_dropout) override {
    if (const SparseFeatures* xs = graph.sparse_features()) {
      const DropoutMask mask = draw_sparse_dropout(dropout, *xs, graph.owned_gids(), 0);
      return attend(graph, sparse_dropout_linear(*xs, mask, linear_->weight, at::Tensor()), 0,
                    edge_dropout);
    }
    const at::Tensor& x = graph.features();
    const DropoutMask mask = draw_dropout(dropout, graph.owned_gids(), in_);
    if (!mask.bits.defined()) {
      return attend(graph, x.matmul(linear_->weight.t()), 0, edge_dropout);
    }
    // dropout_linear adds a bias; the layer's comes after the attention.
    const at::Tensor no_bias = at::zeros({out_}, x.options());
    return attend(graph,
                  dropout_linear(x, at::Tensor(), mask, linear_->weight, no_bias, at::Tensor()), 0,
                  edge_dropout);
  }

  at::Tensor forward(DistGraph& graph, const at::Tensor& h, int layer, bool /*recompute*/,
                     const EdgeDropout& edge_dropout) override {
    return attend(graph, h.matmul(linear_->weight.t()), layer, edge_dropout);
  }

  LayerExchange exchange(int /*layer*/, const DistGraphOptions& /*graph*/) const override {
    return LayerExchange{out_, /*features=*/false, /*backward=*/true};
  }

 private:
  // The attention-weighted sums of z's rows (num_owned x out), heads concatenated, plus the bias.
  // The central rows attend while z's boundary rows travel (their in-edges are all local), the
  // marginal rows once the halo rows are in; backward, the owned rows' work overlaps the return
  // of the halo rows' gradients. z and the halo rows are never copied into one tensor (each is
  // kept once for backward).
  at::Tensor attend(DistGraph& graph, const at::Tensor& z, int layer,
                    const EdgeDropout& edge_dropout) {
    const int64_t n = z.size(0), f = out_ / heads_, central = graph.part().num_central;
    const at::Tensor x = dist_halo_rows_begin(z.contiguous(), graph, layer);
    const DistGraph::Edges& edges = graph.edges();
    const at::Tensor rows = x.view({n, heads_, f});
    const at::Tensor src_score = (rows * att_src_).sum(-1);
    const at::Tensor dst_score = (rows * att_dst_).sum(-1);
    const at::Tensor y_central =
        attend_edges(rows, at::Tensor(), src_score, dst_score, edges,
                     EdgeRange{0, edges.central, 0, central}, edge_dropout);
    const at::Tensor halo = dist_halo_rows_end(x, graph, layer).view({-1, heads_, f});
    const at::Tensor y_marginal =
        attend_edges(rows, halo, at::cat({src_score, (halo * att_src_).sum(-1)}), dst_score, edges,
                     EdgeRange{edges.central, edges.dst.size(0), central, n}, edge_dropout);
    return at::cat({y_central, y_marginal}).view({n, out_}) + linear_->bias;
  }

  // Edges [begin, end) of graph.edges(), whose destinations are rows [first_row, last_row).
  struct EdgeRange {
    int64_t begin, end, first_row, last_row;
  };

  // The weighted sums (last_row - first_row x heads x f) over the edges of `range`, whose sources
  // are `rows` (the owned rows) and `halo` (the received rows; may be undefined when no edge of the
  // range is from one), scored by src_score (over both) and dst_score.
  at::Tensor attend_edges(const at::Tensor& rows, const at::Tensor& halo,
                          const at::Tensor& src_score, const at::Tensor& dst_score,
                          const DistGraph::Edges& edges, const EdgeRange& range,
                          const EdgeDropout& edge_dropout) const {
    const int64_t count = range.end - range.begin, n = range.last_row - range.first_row;
    const at::Tensor src = edges.src.narrow(0, range.begin, count);
    const at::Tensor dst = edges.dst.narrow(0, range.begin, count);  // from first_row
    const at::Tensor e =
        at::leaky_relu(dst_score.narrow(0, range.first_row, n).index_select(0, dst) +
                           src_score.index_select(0, src),
                       kNegativeSlope);
    at::Tensor alpha = edge_softmax(e, dst, n);
    if (edge_dropout.p > 0) {
      alpha =
          alpha * draw_edge_dropout(edge_dropout, dst, src,
                                    edges.gids.narrow(0, range.first_row, n), edges.gids, heads_);
    }
    // Edges from owned rows first, then from received ones (edges.local splits them).
    const int64_t own = std::clamp<int64_t>(edges.local - range.begin, 0, count);
    at::Tensor y = edge_weighted_sum(alpha.narrow(0, 0, own), rows, dst.narrow(0, 0, own),
                                     src.narrow(0, 0, own), n, 0);
    if (own == count) return y;
    ADAQP_CHECK(halo.defined(), "edges from received rows without the received rows");
    return y + edge_weighted_sum(alpha.narrow(0, own, count - own), halo,
                                 dst.narrow(0, own, count - own), src.narrow(0, own, count - own),
                                 n, rows.size(0));
  }

  int64_t in_, out_, heads_;
  torch::nn::Linear linear_;
  at::Tensor att_src_, att_dst_;
};

}  // namespace

std::unique_ptr<GraphConv> make_gat_conv(torch::nn::Module& owner, const std::string& prefix,
                                         const ConvShape& shape) {
  return std::make_unique<GatConv>(owner, prefix, shape.in, shape.out, shape.heads);
}

}  // namespace adaqp::conv_detail
