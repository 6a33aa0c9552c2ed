// Graph attention (model.type gat) on W = mpirun's world size workers against a dense
// single-process GAT written here from its definition (Velickovic et al.): two layers in a row
// (layer 0 over the features, 2 heads; layer 1, 1 head), every rank holding its own part of a
// randomly partitioned graph. The owned nodes' outputs, the gradient of the second layer's input
// and every parameter's gradient (summed over the ranks) equal the dense ones in float64, so a
// missing halo row, a wrong edge, a wrong softmax or a gradient not sent back fails; and the bytes
// are those of both layers' output rows exchanged both ways. With attention dropout, the dense GAT
// draws its masks over the whole graph's edges in global numbering: equal results show that every
// worker drew for its edges what one worker draws for them.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/widths.h"
#include "dense_reference.h"
#include "exchange_reference.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

using test::random_matrix;
using test::rows_of;

// One dense GAT layer in float64: z = h W^T, attention over the in-edges of `mask` (mask[i][j] != 0
// for an edge j -> i), times drop[k] (n x n) in head k when given, heads concatenated, then the
// bias.
at::Tensor dense_gat(const at::Tensor& h, const at::Tensor& mask, const at::Tensor& weight,
                     const at::Tensor& bias, const at::Tensor& att_src, const at::Tensor& att_dst,
                     const at::Tensor& drop) {
  const int64_t n = h.size(0), heads = att_src.size(0), f = att_src.size(1);
  const at::Tensor z = h.mm(weight.t()).view({n, heads, f});
  std::vector<at::Tensor> out;
  for (int64_t k = 0; k < heads; ++k) {
    const at::Tensor zk = z.select(1, k);
    const at::Tensor src = zk.mv(att_src[k]), dst = zk.mv(att_dst[k]);
    const at::Tensor e = at::leaky_relu(dst.unsqueeze(1) + src.unsqueeze(0), 0.2)
                             .masked_fill(mask.eq(0), -std::numeric_limits<double>::infinity());
    const at::Tensor alpha = at::softmax(e, 1);
    out.push_back((drop.defined() ? alpha * drop[k] : alpha).mm(zk));
  }
  return at::cat(out, 1) + bias;
}

// The attention dropout of the whole graph's edges (those of `mask`), drawn in global numbering,
// as dense heads x n x n float64 scales; undefined without dropout.
at::Tensor dense_edge_dropout(const at::Tensor& mask, const EdgeDropout& drop, int64_t heads) {
  if (drop.p == 0) return at::Tensor();
  const at::Tensor ends = at::nonzero(mask);  // (dst, src) pairs
  const at::Tensor dst = ends.select(1, 0).contiguous(), src = ends.select(1, 1).contiguous();
  const at::Tensor gids = at::arange(mask.size(0), at::kLong);
  const at::Tensor scale = draw_edge_dropout(drop, dst, src, gids, gids, heads);
  at::Tensor dense = at::zeros({heads, mask.size(0), mask.size(1)}, at::kDouble);
  for (int64_t k = 0; k < heads; ++k) {
    dense[k].index_put_({dst, src}, scale.select(1, k).to(at::kDouble));
  }
  return dense;
}

struct GatCase {
  bool overlap;
  int bits;                 // 0: full precision; else every message at this width
  float attention_dropout;  // of every layer, keyed by epoch 3 and seed 7
};

void PrintTo(const GatCase& c, std::ostream* os) {
  *os << (c.overlap ? "overlapped" : "not overlapped") << ", "
      << (c.bits == 0 ? std::string("full precision") : std::to_string(c.bits) + " bits")
      << ", attention dropout " << c.attention_dropout;
}

class DistGat : public ::testing::TestWithParam<GatCase> {};

TEST_P(DistGat, TwoLayersMatchDenseAttentionForwardAndBackward) {
  const GatCase c = GetParam();
  const std::unique_ptr<Communicator> comm = test::world_comm();
  const Graph g = test::directed_graph(240, 12);
  PartitionOptions popt;
  popt.method = parse_partition_method("random");  // many cut edges
  popt.parts = comm->size();
  popt.seed = 4;
  DistGraphOptions choices;
  choices.cache_features = false;
  choices.overlap = c.overlap;
  const std::vector<int32_t> owners = assign_parts(g, popt);
  DistGraph graph(build_part(g, owners, comm->rank()), *comm,
                  graph_options_for(ModelType::kGat, choices));
  const Part& part = graph.part();
  if (comm->size() > 1) {
    EXPECT_GT(part.num_halo(), 0) << "the test needs cut edges";
    // The central rows attend apart from the marginal ones: some rank must have both.
    int64_t both = part.num_central > 0 && part.num_marginal() > 0 ? 1 : 0;
    comm->allreduce_sum(&both, 1);
    EXPECT_GT(both, 0) << "no rank has both central and marginal rows";
  }
  // The same parameters on every rank: one seed.
  torch::manual_seed(3);
  torch::nn::Module owner;
  const std::unique_ptr<GraphConv> conv0 =
      make_conv(ModelType::kGat, owner, "layer0", ConvShape{g.feat_dim, 6, /*heads=*/2});
  const std::unique_ptr<GraphConv> conv1 =
      make_conv(ModelType::kGat, owner, "layer1", ConvShape{6, 4, 1});
  const at::Tensor r_all = random_matrix(g.num_nodes, 4, 33);

  QuantPlan plan;
  if (c.bits != 0) {
    SchemeOptions scheme;
    scheme.bits = c.bits;
    plan = scheme_plan(graph.boundary(), 2, scheme, 1);
  }
  const QuantPlanScope quantized(graph, c.bits != 0 ? &plan : nullptr);
  const auto edge_dropout = [&](uint32_t layer) {
    return EdgeDropout{DropoutKey{7, 3, layer}, c.attention_dropout};
  };
  const at::Tensor y0 = conv0->forward_features(graph, FeatureDropout{}, edge_dropout(0));
  const at::Tensor h1 = y0.relu();
  h1.retain_grad();
  const at::Tensor y1 = conv1->forward(graph, h1, 1, false, edge_dropout(1));
  (y1 * rows_of(r_all, part.owned_gid)).sum().backward();

  // Dense: the same parameters, in float64, on the whole graph.
  std::map<std::string, at::Tensor> p;
  for (const auto& item : owner.named_parameters()) {
    p[item.key()] = item.value().detach().to(at::kDouble).requires_grad_(true);
  }
  ASSERT_EQ(p.size(), 8u);
  const auto layer = [&](int l, const char* what) {
    return p.at("layer" + std::to_string(l) + what);
  };
  const at::Tensor mask = test::dense_adjacency(g, ModelType::kSage);
  const at::Tensor x =
      at::from_blob(const_cast<float*>(g.features.data()), {g.num_nodes, g.feat_dim}, at::kFloat)
          .to(at::kDouble);
  const at::Tensor d0 = dense_gat(
      x, mask, layer(0, "_neighbour.weight"), layer(0, "_neighbour.bias"), layer(0, "_att_src"),
      layer(0, "_att_dst"), dense_edge_dropout(mask, edge_dropout(0), 2));
  const at::Tensor dh1 = d0.relu();
  dh1.retain_grad();
  const at::Tensor d1 = dense_gat(
      dh1, mask, layer(1, "_neighbour.weight"), layer(1, "_neighbour.bias"), layer(1, "_att_src"),
      layer(1, "_att_dst"), dense_edge_dropout(mask, edge_dropout(1), 1));
  (d1 * r_all.to(at::kDouble)).sum().backward();

  const bool exact = c.bits == 0;
  const double tol = exact ? test::kDenseTol : test::kQuantizedOutputTol;
  EXPECT_LE(test::max_error(y0, rows_of(d0.detach(), part.owned_gid)), tol);
  EXPECT_LE(test::max_error(y1, rows_of(d1.detach(), part.owned_gid)), tol);
  test::expect_grad_close(h1.grad(), rows_of(dh1.grad(), part.owned_gid), exact, "h1");
  // Each rank's parameter gradients cover its own nodes' outputs; their sum is the whole graph's.
  for (const auto& item : owner.named_parameters()) {
    at::Tensor grad = item.value().grad().contiguous().clone();
    comm->allreduce_sum(grad.data_ptr<float>(), static_cast<size_t>(grad.numel()));
    test::expect_grad_close(grad, p.at(item.key()).grad(), exact, item.key());
  }
  // Both layers' output rows (6 and 4 floats) forward and their gradients back; the rows counted
  // from the graph and the owners, not from the boundary under test.
  const test::ExchangedRows rows =
      test::exchanged_rows(g, owners, comm->rank(), ExchangeLayout::kRows);
  int64_t bytes = 0;
  for (const int64_t width : {6, 4}) {
    const int64_t row = c.bits == 0 ? width * static_cast<int64_t>(sizeof(float))
                                    : quant::message_bytes(width, c.bits);
    bytes += rows.both() * row;
  }
  EXPECT_EQ(graph.comm_stats().bytes_sent, bytes);
  // A graph built for attention has no products: an aggregation is refused before it exchanges.
  EXPECT_THROW(graph.aggregate_features(), InvariantError);
  EXPECT_EQ(graph.comm_stats().bytes_sent, bytes);
}

INSTANTIATE_TEST_SUITE_P(Schedules, DistGat,
                         ::testing::Values(GatCase{false, 0, 0.0f}, GatCase{true, 0, 0.0f},
                                           GatCase{true, 8, 0.0f}, GatCase{false, 0, 0.5f},
                                           GatCase{true, 0, 0.5f}));

}  // namespace
}  // namespace adaqp
