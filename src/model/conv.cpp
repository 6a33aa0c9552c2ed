#include "adaqp/model/conv.h"

#include "adaqp/common/error.h"
#include "convs.h"

namespace adaqp {
namespace {

// The layer types. A new one is its file (src/model/<name>_conv.cpp), its factory in convs.h, a row
// here, and its name and the rules of the job's keys for it in common/choices (ModelType,
// kModelTypes, kModelTypeRules).
struct ConvType {
  ModelType type;
  const EdgeNorm& norm;
  bool reads_features;       // layer 0 reads X itself, not only A X
  bool aggregates_features;  // layer 0 reads A X
  bool multiplies;           // the layers multiply by A (attention reads only its pattern)
  bool sparse_input;         // layer 0 can read its inputs kept sparse (it sends no rows of X)
  bool relational;           // aggregates each relation on its own; caches that of X
  std::unique_ptr<GraphConv> (*make)(torch::nn::Module&, const std::string&, const ConvShape&);
};

const ConvType kConvTypes[] = {
    {ModelType::kGcn, conv_detail::kGcnNorm, false, true, true, true, false,
     conv_detail::make_gcn_conv},
    {ModelType::kSage, conv_detail::kMeanNorm, true, true, true, true, false,
     conv_detail::make_sage_conv},
    {ModelType::kGat, conv_detail::kMeanNorm, true, false, false, true, false,
     conv_detail::make_gat_conv},
    {ModelType::kRgcn, conv_detail::kMeanNorm, true, false, false, false, true,
     conv_detail::make_rgcn_conv},
};

const ConvType& conv_type(ModelType type) {
  for (const ConvType& c : kConvTypes) {
    if (c.type == type) return c;
  }
  throw InvariantError(std::string("no layer for model type ") + to_string(type));
}

}  // namespace

std::unique_ptr<GraphConv> make_conv(ModelType type, torch::nn::Module& owner,
                                     const std::string& prefix, const ConvShape& shape) {
  return conv_type(type).make(owner, prefix, shape);
}

const EdgeNorm& conv_norm(ModelType type) {
  return conv_type(type).norm;
}

DistGraphOptions graph_options_for(ModelType type, DistGraphOptions choices) {
  const ConvType& c = conv_type(type);
  choices.norm = &c.norm;
  choices.keep_features = c.reads_features;
  choices.cache_features = choices.cache_features && (c.aggregates_features || c.relational);
  choices.relational = c.relational;
  choices.products = c.multiplies;
  choices.sparse_features = choices.sparse_features && c.sparse_input;
  return choices;
}

}  // namespace adaqp
