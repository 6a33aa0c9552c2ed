// The layer types behind make_conv. Private to src/model.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>

#include "adaqp/model/conv.h"

namespace adaqp::conv_detail {

// a_ij = 1 / sqrt(out_deg(j) * in_deg(i)) (gcn_conv.cpp); 1 / in_deg(i) (sage_conv.cpp).
extern const EdgeNorm kGcnNorm;
extern const EdgeNorm kMeanNorm;

std::unique_ptr<GraphConv> make_gcn_conv(torch::nn::Module& owner, const std::string& prefix,
                                         int64_t in, int64_t out);
std::unique_ptr<GraphConv> make_sage_conv(torch::nn::Module& owner, const std::string& prefix,
                                          int64_t in, int64_t out);

}  // namespace adaqp::conv_detail
