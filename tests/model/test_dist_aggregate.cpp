// The distributed aggregation and the GCN/SAGE layers on one worker, against dense single-process
// autograd on the normalised adjacency.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/utils.h>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "adaqp/model/conv.h"
#include "adaqp/model/dist_aggregate.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/gnn.h"
#include "adaqp/partition/part.h"
#include "dense_reference.h"
#include "nn_test_util.h"

namespace adaqp {
namespace {

using test::dense_adjacency;
using test::random_matrix;
using test::rows_of;

// The whole graph as the single part of a one-worker run, plus the dense adjacency in the part's
// local numbering.
struct SingleWorker {
  SingleWorker(const Graph& g, ModelType type)
      : graph(build_part(g, std::vector<int32_t>(static_cast<size_t>(g.num_nodes), 0), 0),
              test::single_rank_comm(),
              DistGraphOptions{&conv_norm(type), true, true, false, Device::cpu()}) {
    const std::vector<int64_t>& gids = graph.part().owned_gid;
    a = rows_of(rows_of(dense_adjacency(g, type), gids).t(), gids).t().contiguous();
  }
  DistGraph graph;
  at::Tensor a;  // float64, local numbering
};

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double err = test::max_error(got, want);
  const double scale = std::max(1.0, want.abs().max().item<double>());
  EXPECT_LE(err, test::kDenseTol * scale) << what << ": max abs error " << err;
}

class DistAggregateSingle : public ::testing::TestWithParam<ModelType> {};

// `g` with every edge u -> v where (u + v) % 11 == 0 twice: on a symmetric graph both directions of
// a pair (the pattern stays symmetric, with repeated entries), or with `one_way` only those with
// u < v (the pattern symmetric, the copies uneven: not a symmetric matrix pattern).
Graph with_doubled_edges(const Graph& g, bool one_way) {
  Graph out = g;
  out.indptr = {0};
  out.indices.clear();
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      out.indices.push_back(u);
      if ((u + v) % 11 == 0 && (!one_way || u < v)) out.indices.push_back(u);
    }
    out.indptr.push_back(static_cast<int64_t>(out.indices.size()));
  }
  return out;
}

// On a symmetric graph, a directed one, where in-degrees and out-degrees differ (so a norm taken
// from the wrong degree, or a backward through A instead of its transpose, shows), and two
// multigraphs: repeated entries in both directions (the transpose's values on the pattern) and in
// one (a transpose of its own).
TEST_P(DistAggregateSingle, ForwardAndBackwardMatchDense) {
  for (const std::string kind : {"symmetric", "directed", "multigraph", "uneven multigraph"}) {
    const Graph g = kind == "directed" ? test::directed_graph(150, 3)
                    : kind == "symmetric"
                        ? test::small_graph(150, 3)
                        : with_doubled_edges(test::small_graph(150, 3), kind != "multigraph");
    g.validate(kind);
    SingleWorker w(g, GetParam());
    if (kind == "directed") {
      ASSERT_FALSE(at::allclose(w.a, w.a.t()));
    }
    if (kind != "symmetric" && kind != "directed") {
      ASSERT_GT(g.num_edges(), test::small_graph(150, 3).num_edges());
    }
    const int64_t n = w.graph.num_owned(), d = 7;
    ASSERT_EQ(n, g.num_nodes);
    const at::Tensor h = random_matrix(n, d, 11).requires_grad_(true);
    const at::Tensor r = random_matrix(n, d, 12);
    const at::Tensor y = dist_aggregate(h, w.graph, 1);
    (y * r).sum().backward();
    const std::string graph = kind + ": ";
    expect_close(y, w.a.mm(h.detach().to(at::kDouble)), graph + "forward");
    expect_close(h.grad(), w.a.t().mm(r.to(at::kDouble)), graph + "backward");
  }
}

TEST_P(DistAggregateSingle, FeatureAggregationMatchesDense) {
  const Graph g = test::small_graph(120, 4);
  SingleWorker w(g, GetParam());
  const Part& p = w.graph.part();
  const at::Tensor x =
      at::from_blob(const_cast<float*>(p.features.data()), {p.num_owned(), p.feat_dim}, at::kFloat);
  const at::Tensor y = w.graph.aggregate_features();
  expect_close(y, w.a.mm(x.to(at::kDouble)), "features");
}

INSTANTIATE_TEST_SUITE_P(Aggregations, DistAggregateSingle,
                         ::testing::Values(ModelType::kGcn, ModelType::kSage),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The model of gnn.h written densely: float64 copies of the parameters, whole-graph matrices.
at::Tensor dense_forward(const at::Tensor& a, const at::Tensor& x, const GnnOptions& opt,
                         std::map<std::string, at::Tensor>& p, const ForwardMode& mode,
                         const std::vector<int64_t>& gids) {
  const bool sage = opt.type == ModelType::kSage;
  at::Tensor h = x.to(at::kDouble);
  // Layer l's dropout mask, `width` elements per row.
  const auto mask = [&](int l, int64_t width) {
    const int64_t n = h.size(0);
    DropoutKey key = mode.key;
    key.layer = static_cast<uint32_t>(l);
    const auto p = static_cast<float>(opt.dropout);
    std::vector<uint32_t> bits(static_cast<size_t>(n * kernels::bit_words(width)));
    kernels::dropout_keep_bits(Device::cpu(), key, p, gids.data(), n, width, bits.data());
    at::Tensor m = at::ones({n, width}, at::kFloat);
    const kernels::MaskView view{bits.data(), kernels::bit_words(width), 0, 1.0f / (1.0f - p)};
    kernels::apply_mask(Device::cpu(), m.data_ptr<float>(), n, width, view, /*relu=*/false,
                        m.data_ptr<float>(), nullptr);
    return m.to(at::kDouble);
  };
  const bool drop = mode.training && opt.dropout > 0;
  for (int l = 0; l < opt.layers; ++l) {
    const std::string pre = "layer" + std::to_string(l);
    const int64_t d = h.size(1);
    at::Tensor z, root = h;
    if (l == 0) {
      z = a.mm(h);
      if (drop) {
        const at::Tensor m = mask(0, sage ? 2 * d : d);
        z = z * m.narrow(1, 0, d);
        if (sage) root = root * m.narrow(1, d, d);
      }
    } else {
      if (drop) root = h * mask(l, d);
      z = a.mm(root);
    }
    at::Tensor y = z.mm(p[pre + "_neighbour.weight"].t()) + p[pre + "_neighbour.bias"];
    if (sage) y = y + root.mm(p[pre + "_root.weight"].t());
    if (l + 1 < opt.layers) {
      if (opt.layer_norm) {
        y = at::layer_norm(y, {y.size(1)}, p[pre + "_norm.weight"], p[pre + "_norm.bias"], 1e-5);
      }
      y = at::relu(y);
    }
    h = y;
  }
  return h;
}

struct LayerCase {
  ModelType type;
  int layers;
  bool layer_norm;
  double dropout;
};

void PrintTo(const LayerCase& c, std::ostream* os) {
  *os << to_string(c.type) << ", " << c.layers << " layers" << (c.layer_norm ? ", LayerNorm" : "")
      << ", dropout " << c.dropout;
}

class GnnSingle : public ::testing::TestWithParam<LayerCase> {};

TEST_P(GnnSingle, LogitsAndParameterGradientsMatchDense) {
  const LayerCase c = GetParam();
  const Graph g = test::small_graph(130, 5);
  SingleWorker w(g, c.type);
  const Part& part = w.graph.part();
  GnnOptions opt;
  opt.type = c.type;
  opt.layers = c.layers;
  opt.in_dim = part.feat_dim;
  opt.hidden = 10;
  opt.out_dim = part.num_classes;
  opt.dropout = c.dropout;
  opt.layer_norm = c.layer_norm;
  torch::manual_seed(1);
  Gnn model(opt);
  ForwardMode mode;
  mode.training = true;
  mode.key = DropoutKey{77, 3, 0};

  const at::Tensor logits = model->forward(w.graph, mode);
  const at::Tensor r = random_matrix(logits.size(0), logits.size(1), 21);
  (logits * r).sum().backward();

  std::map<std::string, at::Tensor> ref_params;
  for (const auto& item : model->named_parameters()) {
    ref_params[item.key()] = item.value().detach().to(at::kDouble).requires_grad_(true);
  }
  const at::Tensor x = at::from_blob(const_cast<float*>(part.features.data()),
                                     {part.num_owned(), part.feat_dim}, at::kFloat);
  const at::Tensor ref = dense_forward(w.a, x, opt, ref_params, mode, part.owned_gid);
  (ref * r.to(at::kDouble)).sum().backward();

  expect_close(logits, ref, "logits");
  for (const auto& item : model->named_parameters()) {
    expect_close(item.value().grad(), ref_params[item.key()].grad(), "gradient of " + item.key());
  }
}

// training.recompute: aggregations makes A h again in backward from h and the halo rows: the
// same products, so the same logits and gradients, bit for bit.
TEST(GnnRecompute, SameLogitsAndGradientsAsKeepingTheAggregation) {
  const Graph g = test::small_graph(140, 6);
  SingleWorker w(g, ModelType::kSage);
  GnnOptions opt;
  opt.type = ModelType::kSage;
  opt.layers = 4;
  opt.in_dim = w.graph.part().feat_dim;
  opt.hidden = 12;
  opt.out_dim = w.graph.part().num_classes;
  ForwardMode mode;
  mode.training = true;
  mode.key = DropoutKey{5, 2, 0};
  std::vector<at::Tensor> logits, grads;
  for (bool recompute : {false, true}) {
    opt.recompute_aggregations = recompute;
    torch::manual_seed(3);
    Gnn model(opt);
    const at::Tensor out = model->forward(w.graph, mode);
    (out * random_matrix(out.size(0), out.size(1), 8)).sum().backward();
    logits.push_back(out.detach());
    std::vector<at::Tensor> g;
    for (const at::Tensor& p : model->parameters()) g.push_back(p.grad().flatten());
    grads.push_back(at::cat(g));
  }
  EXPECT_TRUE(at::equal(logits[0], logits[1]));
  EXPECT_TRUE(at::equal(grads[0], grads[1]));
  EXPECT_GT(grads[0].abs().sum().item<double>(), 0);
}

INSTANTIATE_TEST_SUITE_P(Models, GnnSingle,
                         ::testing::Values(LayerCase{ModelType::kGcn, 2, false, 0.5},
                                           LayerCase{ModelType::kGcn, 3, true, 0.3},
                                           LayerCase{ModelType::kSage, 2, false, 0.5},
                                           LayerCase{ModelType::kSage, 3, true, 0.0}),
                         [](const auto& info) {
                           const LayerCase& c = info.param;
                           return std::string(to_string(c.type)) + std::to_string(c.layers) +
                                  (c.layer_norm ? "_ln" : "") + (c.dropout > 0 ? "_dropout" : "");
                         });

}  // namespace
}  // namespace adaqp
