// GCN (Kipf & Welling): Y = A_gcn H W + b, a_ij = 1 / sqrt(out_deg(j) * in_deg(i)).
#include <cmath>
#include <memory>

#include "adaqp/model/conv.h"
#include "conv_common.h"
#include "convs.h"

namespace adaqp::conv_detail {

const EdgeNorm kGcnNorm{
    "gcn", [](int64_t in_deg_dst, int64_t out_deg_src) {
      return static_cast<float>(
          1.0 / std::sqrt(static_cast<double>(in_deg_dst) * static_cast<double>(out_deg_src)));
    }};

namespace {

class GcnConv final : public GraphConv {
 public:
  GcnConv(torch::nn::Module& owner, const std::string& prefix, int64_t in, int64_t out)
      : in_(in),
        out_(out),
        neighbour_(
            owner.register_module(prefix + "_neighbour", glorot_linear(in, out, /*bias=*/true))) {}

  const EdgeNorm& norm() const override { return kGcnNorm; }
  at::Tensor forward_features(DistGraph& graph, const FeatureDropout& dropout,
                              const EdgeDropout& /*edge_dropout*/) override {
    return features_linear(graph, dropout, neighbour_, at::Tensor());
  }

  at::Tensor forward(DistGraph& graph, const at::Tensor& h, int layer, bool recompute,
                     const EdgeDropout& /*edge_dropout*/) override {
    return aggregate_linear(graph, h, layer, recompute, neighbour_, at::Tensor());
  }

  LayerExchange exchange(int layer, const DistGraphOptions& /*graph*/) const override {
    return linear_exchange(layer, in_, out_);
  }

 private:
  int64_t in_, out_;
  torch::nn::Linear neighbour_;
};

}  // namespace

std::unique_ptr<GraphConv> make_gcn_conv(torch::nn::Module& owner, const std::string& prefix,
                                         const ConvShape& shape) {
  return std::make_unique<GcnConv>(owner, prefix, shape.in, shape.out);
}

}  // namespace adaqp::conv_detail
