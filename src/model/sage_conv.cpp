// GraphSAGE-mean: Y = A_mean H W_n + b + H W_r, a_ij = 1 / in_deg(i). In layer 0 a row's dropout
// mask has 2 * in elements: the first in for A X, the last in for the root term's X.
#include <memory>

#include "adaqp/model/conv.h"
#include "conv_common.h"
#include "convs.h"

namespace adaqp::conv_detail {

const EdgeNorm kMeanNorm{"mean", [](int64_t in_deg_dst, int64_t /*out_deg_src*/) {
                           return static_cast<float>(1.0 / static_cast<double>(in_deg_dst));
                         }};

namespace {

// Initialised as PyG's SAGEConv: libtorch's Linear default, uniform within 1 / sqrt(in) (the
// neighbour term's bias too). DGL's Glorot with the ReLU gain on both terms gave logits so large
// on unnormalised features that training stalled (Amazon Photo: 47-87% by seed against 92-93%;
// benchmarks/results/README.md, "GraphSAGE's initialisation").
class SageConv final : public GraphConv {
 public:
  SageConv(torch::nn::Module& owner, const std::string& prefix, int64_t in, int64_t out)
      : in_(in),
        out_(out),
        neighbour_(owner.register_module(prefix + "_neighbour",
                                         torch::nn::Linear(torch::nn::LinearOptions(in, out)))),
        root_(owner.register_module(
            prefix + "_root", torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false)))) {}

  const EdgeNorm& norm() const override { return kMeanNorm; }
  at::Tensor forward_features(DistGraph& graph, const FeatureDropout& dropout,
                              const EdgeDropout& /*edge_dropout*/) override {
    return features_linear(graph, dropout, neighbour_, root_->weight);
  }

  at::Tensor forward(DistGraph& graph, const at::Tensor& h, int layer, bool recompute,
                     const EdgeDropout& /*edge_dropout*/) override {
    return aggregate_linear(graph, h, layer, recompute, neighbour_, root_->weight);
  }

  LayerExchange exchange(int layer, const DistGraphOptions& /*graph*/) const override {
    return linear_exchange(layer, in_, out_);
  }

 private:
  int64_t in_, out_;
  torch::nn::Linear neighbour_;
  torch::nn::Linear root_;
};

}  // namespace

std::unique_ptr<GraphConv> make_sage_conv(torch::nn::Module& owner, const std::string& prefix,
                                          const ConvShape& shape) {
  return std::make_unique<SageConv>(owner, prefix, shape.in, shape.out);
}

}  // namespace adaqp::conv_detail
