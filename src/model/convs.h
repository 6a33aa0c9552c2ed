// The layer types behind make_conv. Private to src/model.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>

#include "adaqp/model/conv.h"

namespace adaqp::conv_detail {

// a_ij = 1 / sqrt(out_deg(j) * in_deg(i)) (gcn_conv.cpp); 1 / in_deg(i) (sage_conv.cpp; GAT's
// stand-in for its attention where the bit-width solver weighs messages).
extern const EdgeNorm kGcnNorm;
extern const EdgeNorm kMeanNorm;

// Each reads the parts of the shape that apply to it (heads: GAT's; relations and bases: R-GCN's).
std::unique_ptr<GraphConv> make_gcn_conv(torch::nn::Module& owner, const std::string& prefix,
                                         const ConvShape& shape);
std::unique_ptr<GraphConv> make_sage_conv(torch::nn::Module& owner, const std::string& prefix,
                                          const ConvShape& shape);
std::unique_ptr<GraphConv> make_gat_conv(torch::nn::Module& owner, const std::string& prefix,
                                         const ConvShape& shape);
std::unique_ptr<GraphConv> make_rgcn_conv(torch::nn::Module& owner, const std::string& prefix,
                                          const ConvShape& shape);

}  // namespace adaqp::conv_detail
