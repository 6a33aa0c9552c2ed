// R-GCN (model.type rgcn) on W = mpirun's world size workers against a dense single-process
// R-GCN written here from its definition (Schlichtkrull et al.; PyG's RGCNConv with mean
// aggregation): y = h W_0 + b + sum_r D_r^-1 A_r h W_r, with A_r relation r's dense adjacency and
// D_r its in-degrees. Two layers in a row (layer 0 over the features, layer 1 over its ReLU), every
// rank holding its own part of a randomly partitioned ogbn-mag-shaped graph with reverse relations
// (every node given features, so that every relation carries something). The owned nodes'
// outputs, the gradient of the second layer's input and every parameter's gradient (summed over
// the ranks) equal the dense ones in float64, so a missing halo row, an edge under the wrong
// relation or degree, or a gradient not sent back fails; with the basis decomposition too; over
// the rows layout and the relation_first one (each sender's transformed contributions), with layer
// 0 over X or over its cached per-relation aggregation. With dropout, the dense model draws layer
// 0's mask over the whole graph in global numbering (and applies it to X, or with the cache to X
// in the root term only): equal results show that every worker drew for its rows what one worker
// draws for them. The bytes are each layout's rows, counted from the whole graph
// (support/exchange_reference.h).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/autograd.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "adaqp/graph/generator.h"
#include "adaqp/kernels/dropout.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/gnn.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/widths.h"
#include "adaqp/train/trainer.h"
#include "dense_reference.h"
#include "exchange_reference.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

using test::random_matrix;
using test::rows_of;

constexpr int64_t kHidden = 6, kOut = 4;

// The ogbn-mag-shaped graph with reverse relations, every node with random features, or (`all`
// false) only the papers, as the generator makes it; `classes` classes.
Graph typed_graph(bool all = true, int classes = 4) {
  GeneratorOptions opt;
  opt.heterogeneous = true;
  opt.num_nodes = 400;
  opt.num_classes = classes;
  opt.feat_dim = 10;
  opt.avg_degree = 4;
  opt.seed = 9;
  Graph g = generate_graph(opt);
  GraphTransform t;
  t.add_reverse = true;
  apply_transform(g, t);
  if (all) {
    const at::Tensor x = random_matrix(g.num_nodes, g.feat_dim, 21);
    std::copy_n(x.data_ptr<float>(), x.numel(), g.features.begin());
  }
  return g;
}

// D_r^-1 A_r for every relation: relations x n x n, float64.
at::Tensor dense_relation_means(const Graph& g) {
  const auto relations = static_cast<int64_t>(g.relations.size());
  at::Tensor a = at::zeros({relations, g.num_nodes, g.num_nodes}, at::kDouble);
  auto acc = a.accessor<double, 3>();
  for (int64_t i = 0; i < g.num_nodes; ++i) {
    for (int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
      acc[g.edge_relation[e]][i][g.indices[e]] += 1.0;
    }
  }
  const at::Tensor deg = a.sum(2, /*keepdim=*/true);
  return a / deg.clamp_min(1.0);
}

// One dense R-GCN layer: root (out x in) and bias, W (relations x in x out).
at::Tensor dense_rgcn(const at::Tensor& h, const at::Tensor& means, const at::Tensor& root,
                      const at::Tensor& bias, const at::Tensor& w) {
  at::Tensor y = h.mm(root.t()) + bias;
  for (int64_t r = 0; r < means.size(0); ++r) y = y + means[r].mm(h).mm(w[r]);
  return y;
}

// The layer's relation weights from its parameters (`p`, named as the layer registers them).
at::Tensor dense_weights(const std::map<std::string, at::Tensor>& p, const std::string& layer) {
  const auto it = p.find(layer + "_relation");
  if (it != p.end()) return it->second;
  const at::Tensor& bases = p.at(layer + "_bases");
  return p.at(layer + "_coefficients")
      .mm(bases.view({bases.size(0), -1}))
      .view({-1, bases.size(1), bases.size(2)});
}

// Layer 0's dropout scales over the whole graph in global numbering (n x feat, float64), ones
// without dropout.
at::Tensor dense_feature_dropout(const FeatureDropout& drop, int64_t n, int64_t width) {
  const at::Tensor ones = at::ones({n, width}, at::kFloat);
  const DropoutMask mask = draw_dropout(drop, at::arange(n, at::kLong), width);
  if (!mask.bits.defined()) return ones.to(at::kDouble);
  at::Tensor out = at::empty_like(ones);
  kernels::apply_mask(Device::cpu(), ones.data_ptr<float>(), n, width, mask.view(), false,
                      out.data_ptr<float>(), nullptr);
  return out.to(at::kDouble);
}

struct RgcnCase {
  ExchangeLayout layout;
  bool cache;  // layer 0 over its cached aggregation of X
  bool overlap;
  int bits;                  // 0: full precision; else every message at this width
  int bases;                 // 0: a weight per relation
  float dropout;             // of layer 0's features, keyed by epoch 3 and seed 7
  bool papers_only = false;  // features on papers only, as generated (zero pairs in the cache)
};

void PrintTo(const RgcnCase& c, std::ostream* os) {
  *os << to_string(c.layout) << (c.cache ? ", cached layer 0, " : ", ")
      << (c.overlap ? "overlapped" : "not overlapped") << ", "
      << (c.bits == 0 ? std::string("full precision") : std::to_string(c.bits) + " bits") << ", "
      << c.bases << " bases, dropout " << c.dropout
      << (c.papers_only ? ", features on papers only" : "");
}

class DistRgcn : public ::testing::TestWithParam<RgcnCase> {};

TEST_P(DistRgcn, TwoLayersMatchDenseRgcnForwardAndBackward) {
  const RgcnCase c = GetParam();
  const std::unique_ptr<Communicator> comm = test::world_comm();
  const Graph g = typed_graph(/*all=*/!c.papers_only);
  const auto relations = static_cast<int>(g.relations.size());
  ASSERT_GE(relations, 7) << "four relations and their reverses (writes within a type has none)";
  PartitionOptions popt;
  popt.method = parse_partition_method("random");  // many cut edges
  popt.parts = comm->size();
  popt.seed = 4;
  DistGraphOptions choices;
  choices.overlap = c.overlap;
  choices.cache_features = c.cache;
  choices.exchange = c.layout;
  const std::vector<int32_t> owners = assign_parts(g, popt);
  DistGraph graph(build_part(g, owners, comm->rank()), *comm,
                  graph_options_for(ModelType::kRgcn, choices));
  const Part& part = graph.part();
  ASSERT_EQ(part.num_relations, relations);
  if (comm->size() > 1) {
    EXPECT_GT(part.num_halo(), 0) << "the test needs cut edges";
  }
  // The same parameters on every rank: one seed.
  torch::manual_seed(3);
  torch::nn::Module owner;
  const std::unique_ptr<GraphConv> conv0 = make_conv(
      ModelType::kRgcn, owner, "layer0", ConvShape{g.feat_dim, kHidden, 1, relations, c.bases});
  const std::unique_ptr<GraphConv> conv1 =
      make_conv(ModelType::kRgcn, owner, "layer1", ConvShape{kHidden, kOut, 1, relations, c.bases});
  const at::Tensor r_all = random_matrix(g.num_nodes, kOut, 33);

  QuantPlan plan;
  if (c.bits != 0) {
    SchemeOptions scheme;
    scheme.bits = c.bits;
    plan = scheme_plan(graph.boundary(), 2, scheme, 1);
  }
  const QuantPlanScope quantized(graph, c.bits != 0 ? &plan : nullptr);
  const FeatureDropout dropout{DropoutDraw{DropoutKey{7, 3, 0}, c.dropout}};
  const at::Tensor y0 = conv0->forward_features(graph, dropout, EdgeDropout{});
  const at::Tensor h1 = y0.relu();
  h1.retain_grad();
  const at::Tensor y1 = conv1->forward(graph, h1, 1, false, EdgeDropout{});
  (y1 * rows_of(r_all, part.owned_gid)).sum().backward();

  // Dense: the same parameters, in float64, on the whole graph.
  std::map<std::string, at::Tensor> p;
  for (const auto& item : owner.named_parameters()) {
    p[item.key()] = item.value().detach().to(at::kDouble).requires_grad_(true);
  }
  ASSERT_EQ(p.size(), c.bases == 0 ? 6u : 8u);
  const at::Tensor means = dense_relation_means(g);
  const at::Tensor x0 =
      at::from_blob(const_cast<float*>(g.features.data()), {g.num_nodes, g.feat_dim}, at::kFloat)
          .to(at::kDouble);
  const at::Tensor mask = dense_feature_dropout(dropout, g.num_nodes, g.feat_dim);
  at::Tensor d0;
  if (c.cache) {
    // The mask on X in the root term only; each relation's aggregation of X is not dropped.
    d0 = (x0 * mask).mm(p.at("layer0_root.weight").t()) + p.at("layer0_root.bias");
    const at::Tensor w0 = dense_weights(p, "layer0");
    for (int64_t r = 0; r < relations; ++r) d0 = d0 + means[r].mm(x0).mm(w0[r]);
  } else {
    d0 = dense_rgcn(x0 * mask, means, p.at("layer0_root.weight"), p.at("layer0_root.bias"),
                    dense_weights(p, "layer0"));
  }
  const at::Tensor dh1 = d0.relu();
  dh1.retain_grad();
  const at::Tensor d1 = dense_rgcn(dh1, means, p.at("layer1_root.weight"), p.at("layer1_root.bias"),
                                   dense_weights(p, "layer1"));
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
  // rows: the features' rows forward (no gradient flows back to them) unless cached, the hidden
  // rows both ways; relation_first: each layer's output rows both ways (the senders' W_r
  // gradients need them), layer 0's unless cached.
  // The rows counted from the graph and the owners, not from the boundary under test.
  const test::ExchangedRows rows = test::exchanged_rows(g, owners, comm->rank(), c.layout);
  const auto row = [&](int64_t width) {
    return c.bits == 0 ? width * static_cast<int64_t>(sizeof(float))
                       : quant::message_bytes(width, c.bits);
  };
  const int64_t both = rows.both();
  const int64_t want = c.layout == ExchangeLayout::kRows
                           ? (c.cache ? 0 : rows.sends * row(g.feat_dim)) + both * row(kHidden)
                           : (c.cache ? 0 : both * row(kHidden)) + both * row(kOut);
  EXPECT_EQ(graph.comm_stats().bytes_sent, want);
  if (c.cache) {
    // The cache keeps the pairs whose aggregation is not zero: all of them when every node has
    // features, fewer when only papers do (the relations from the other types add nothing).
    int64_t counts[2] = {graph.relation_features().rows.size(0),
                         graph.relation_adjacency().num_pairs()};
    comm->allreduce_sum(counts, 2);
    if (c.papers_only) {
      EXPECT_LT(counts[0], counts[1]);
    } else {
      EXPECT_EQ(counts[0], counts[1]);
    }
  }
  EXPECT_EQ(graph.boundary().sends(), rows.sends);
  EXPECT_EQ(graph.boundary().recvs(), rows.recvs);
  if (comm->size() > 1 && c.layout == ExchangeLayout::kRelationFirst) {
    // Never more rows from a sender than the destinations of its cut edges (a partial sum for each
    // would carry them all), and fewer somewhere on this graph.
    std::vector<std::set<int64_t>> destinations(static_cast<size_t>(part.num_parts));
    for (int64_t i = 0; i < g.num_nodes; ++i) {
      if (owners[i] != part.rank) continue;
      for (int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
        const int32_t sender = owners[g.indices[e]];
        if (sender != part.rank) destinations[sender].insert(i);
      }
    }
    int64_t counts[2] = {rows.recvs, 0};  // received rows, destinations
    for (int s = 0; s < part.num_parts; ++s) {
      if (s == part.rank) continue;
      const auto n = static_cast<int64_t>(destinations[s].size());
      EXPECT_LE(graph.boundary().recv_count_from(s), n);
      counts[1] += n;
    }
    comm->allreduce_sum(counts, 2);
    EXPECT_LT(counts[0], counts[1]);
  }
}

// model.featureless embedding: the owned rows of the types without features start at the keyed
// uniform values (computed here from Philox, (seed, gid, column)), whatever rank holds them, and
// the gradient each rank gets for its rows is the dense model's gradient for those input rows, over
// either layout.
class DistRgcnEmbedding : public ::testing::TestWithParam<ExchangeLayout> {};

TEST_P(DistRgcnEmbedding, RowsStartKeyedByNodeAndGetTheDenseGradient) {
  const std::unique_ptr<Communicator> comm = test::world_comm();
  const Graph g = typed_graph(/*all=*/false);
  const auto relations = static_cast<int>(g.relations.size());
  PartitionOptions popt;
  popt.method = parse_partition_method("random");
  popt.parts = comm->size();
  popt.seed = 4;
  DistGraphOptions choices;
  choices.exchange = GetParam();
  DistGraph graph(build_part(g, assign_parts(g, popt), comm->rank()), *comm,
                  graph_options_for(ModelType::kRgcn, choices));
  const Part& part = graph.part();
  // The featureless types: those none of whose nodes has a non-zero feature.
  std::vector<bool> featured(g.node_types.size(), false);
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t c = 0; c < g.feat_dim; ++c) {
      if (g.features[v * g.feat_dim + c] != 0) featured[g.node_type(v)] = true;
    }
  }
  ASSERT_EQ(std::count(featured.begin(), featured.end(), false), 3) << "features on papers only";
  constexpr uint64_t kSeed = 17;
  GnnOptions opt;
  opt.type = ModelType::kRgcn;
  opt.layers = 2;
  opt.in_dim = g.feat_dim;
  opt.hidden = kHidden;
  opt.out_dim = kOut;
  opt.relations = relations;
  opt.embedding.enabled = true;
  opt.embedding.seed = kSeed;
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    if (!featured[g.node_type(part.owned_gid[i])]) {
      opt.embedding.rows.push_back(i);
      opt.embedding.gids.push_back(part.owned_gid[i]);
    }
  }
  torch::manual_seed(3);
  Gnn model(opt);
  const at::Tensor& e = model->local_embedding();
  ASSERT_TRUE(e.defined());
  ASSERT_EQ(e.size(0), static_cast<int64_t>(opt.embedding.rows.size()));
  // Starting values: uniform in +-sqrt(3) from word c % 4 of block c / 4 of (seed, gid).
  at::Tensor x =
      at::from_blob(const_cast<float*>(g.features.data()), {g.num_nodes, g.feat_dim}, at::kFloat)
          .to(at::kDouble);
  std::vector<int64_t> embedded;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    if (featured[g.node_type(v)]) continue;
    embedded.push_back(v);
    for (int64_t c = 0; c < g.feat_dim; ++c) {
      const PhiloxWords w = philox_block(kSeed, 0, 0, RngStream::kInit, static_cast<uint64_t>(v),
                                         static_cast<uint32_t>(c / 4));
      x[v][c] = (2 * ((w.v[c % 4] + 0.5) / 4294967296.0) - 1) * std::sqrt(3.0);
    }
  }
  EXPECT_LE(test::max_error(e, rows_of(x, opt.embedding.gids)), 1e-6);
  const at::Tensor r_all = random_matrix(g.num_nodes, kOut, 33);
  (model->forward(graph, ForwardMode{}) * rows_of(r_all, part.owned_gid)).sum().backward();

  std::map<std::string, at::Tensor> p;
  for (const auto& item : model->named_parameters()) {
    p[item.key()] = item.value().detach().to(at::kDouble);
  }
  const at::Tensor means = dense_relation_means(g);
  x.requires_grad_(true);
  const at::Tensor d0 = dense_rgcn(x, means, p.at("layer0_root.weight"), p.at("layer0_root.bias"),
                                   dense_weights(p, "layer0"));
  const at::Tensor d1 = dense_rgcn(d0.relu(), means, p.at("layer1_root.weight"),
                                   p.at("layer1_root.bias"), dense_weights(p, "layer1"));
  (d1 * r_all.to(at::kDouble)).sum().backward();
  const at::Tensor want = rows_of(x.grad(), opt.embedding.gids);
  test::expect_grad_close(e.grad(), want, /*exact=*/true, "embedding rows");
  // Every embedded node with an out-edge gets a gradient: the test has such rows on some rank.
  int64_t moved = e.grad().ne(0).any(1).sum().item<int64_t>();
  comm->allreduce_sum(&moved, 1);
  EXPECT_GT(moved, 0);
}

constexpr ExchangeLayout kRows = ExchangeLayout::kRows;
constexpr ExchangeLayout kFirst = ExchangeLayout::kRelationFirst;

// communication.exchange auto, two layers, layer 0 cached (only layer 1 exchanges, both ways):
// relation_first where its rows, as wide as the 4 classes, weigh less than the rows layout's, as
// wide as the 32 hidden columns (a minimum cover is never more rows than the destinations, which
// on this symmetric graph are as many as the source rows); rows where the output widens to 24
// classes from 2 hidden columns; rows for GraphSAGE (all relations in one adjacency) and on one
// worker. Every rank makes the same choice.
TEST(DistRgcnAuto, TakesTheLayoutThatMovesFewerBytes) {
  const std::unique_ptr<Communicator> comm = test::world_comm();
  struct AutoCase {
    ModelType type;
    int64_t hidden;
    int classes;
    ExchangeLayout want;
  };
  const ExchangeLayout first = comm->size() > 1 ? kFirst : kRows;
  for (const AutoCase& c :
       {AutoCase{ModelType::kRgcn, 32, 4, first}, AutoCase{ModelType::kRgcn, 2, 24, kRows},
        AutoCase{ModelType::kSage, 32, 4, kRows}}) {
    const Graph g = typed_graph(/*all=*/true, c.classes);
    PartitionOptions popt;
    popt.method = parse_partition_method("random");
    popt.parts = comm->size();
    popt.seed = 4;
    TrainerOptions opt;
    opt.model.type = c.type;
    opt.model.layers = 2;
    opt.model.hidden = c.hidden;
    ASSERT_EQ(opt.exchange, ExchangeLayout::kAuto) << "the default";
    const Trainer t(build_part(g, assign_parts(g, popt), comm->rank()), *comm, opt);
    EXPECT_EQ(t.exchange_layout(), c.want)
        << to_string(c.type) << " " << c.hidden << " -> " << c.classes;
    int64_t chosen[2] = {static_cast<int64_t>(t.exchange_layout()), 1};
    comm->allreduce_sum(chosen, 2);
    EXPECT_EQ(chosen[0], chosen[1] * static_cast<int64_t>(c.want));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, DistRgcn,
    ::testing::Values(
        RgcnCase{kRows, false, false, 0, 0, 0.0f}, RgcnCase{kRows, false, true, 0, 0, 0.0f},
        RgcnCase{kRows, false, true, 0, 3, 0.0f}, RgcnCase{kRows, false, true, 0, 0, 0.5f},
        RgcnCase{kRows, false, false, 0, 2, 0.5f}, RgcnCase{kRows, false, true, 8, 0, 0.0f},
        RgcnCase{kRows, true, true, 0, 0, 0.5f}, RgcnCase{kRows, true, false, 0, 2, 0.0f},
        RgcnCase{kFirst, true, true, 0, 0, 0.5f}, RgcnCase{kFirst, true, false, 0, 3, 0.0f},
        RgcnCase{kFirst, true, true, 8, 0, 0.0f}, RgcnCase{kFirst, false, true, 0, 0, 0.5f},
        RgcnCase{kFirst, false, false, 0, 2, 0.5f}, RgcnCase{kFirst, false, true, 8, 0, 0.0f},
        RgcnCase{kRows, true, true, 0, 0, 0.5f, true},
        RgcnCase{kFirst, true, false, 0, 2, 0.5f, true}));
INSTANTIATE_TEST_SUITE_P(Layouts, DistRgcnEmbedding, ::testing::Values(kRows, kFirst),
                         [](const ::testing::TestParamInfo<ExchangeLayout>& info) {
                           return std::string(to_string(info.param));
                         });

}  // namespace
}  // namespace adaqp
