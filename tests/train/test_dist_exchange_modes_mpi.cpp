// The exchange modes on W = mpirun's world size workers (docs/design.md, sections 4, 5 and 7):
// overlap reproduces vanilla, quantized runs with and without overlap are bit-identical, the
// feature cache changes only the bytes sent, evaluation is at full precision in every mode,
// quantized blocks are exactly the packed size plus metadata, both ends of a random-scheme exchange
// agree on every message's width, the cover layout reproduces the rows layout with fewer rows, and
// the overlapped exchange really progresses while the caller computes (timestamps of the
// exchanger).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/exchange/halo_exchanger.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_aggregate.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/quantizer.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/predictions.h"
#include "adaqp/train/trainer.h"
#include "dense_reference.h"
#include "mpi_skip.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

constexpr int kEpochs = 3;
constexpr int kHidden = 10;  // ceil(10 b / 8) is not a multiple of b: packing is visible

TrainerOptions options(const std::string& mode, const std::string& scheme, int bits, bool cache,
                       ExchangeLayout exchange = ExchangeLayout::kRows) {
  TrainerOptions opt;
  opt.exchange = exchange;
  opt.model.type = ModelType::kGcn;
  opt.model.layers = 3;
  opt.model.hidden = kHidden;
  opt.model.dropout = 0.5;
  opt.seed = 7;
  opt.cache_features = cache;
  // Bitwise comparisons of cache on and off need one layer-0 product: a sparse A X sums in another
  // order (tests/cli/sparse_features.sh compares the two within 1e-5).
  opt.sparse_features = false;
  opt.mode = parse_comm_mode(mode);
  opt.scheme = parse_bit_scheme(scheme);
  opt.bits = bits;
  return opt;
}

struct TrainedRun {
  std::vector<EpochStats> epochs;
  std::vector<float> params;
  int64_t sends = 0, recvs = 0;  // rows per exchange (the boundary's)
};

TrainedRun train(const Graph& g, Communicator& comm, const TrainerOptions& opt) {
  Trainer t(test::my_part(g, comm), comm, opt);
  TrainedRun run;
  run.sends = t.boundary().sends();
  run.recvs = t.boundary().recvs();
  for (int e = 1; e <= kEpochs; ++e) run.epochs.push_back(t.train_epoch(e));
  run.params = t.parameter_values();
  return run;
}

void expect_identical(const TrainedRun& a, const TrainedRun& b, const std::string& what) {
  for (int e = 0; e < kEpochs; ++e) {
    EXPECT_EQ(a.epochs[e].loss, b.epochs[e].loss) << what << ", epoch " << e + 1;
  }
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    ASSERT_EQ(a.params[i], b.params[i]) << what << ", parameter " << i;
  }
}

TEST(ExchangeModes, OverlapReproducesVanilla) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 21);
  for (bool cache : {true, false}) {
    const TrainedRun vanilla = train(g, *comm, options("vanilla", "uniform", 8, cache));
    const TrainedRun overlap = train(g, *comm, options("overlap", "uniform", 8, cache));
    // Same arithmetic in the same order: equal, which is within the required 1e-6 relative.
    expect_identical(vanilla, overlap, cache ? "cached features" : "exchanged features");
    for (int e = 0; e < kEpochs; ++e) {
      EXPECT_EQ(vanilla.epochs[e].bytes_sent, overlap.epochs[e].bytes_sent);
    }
  }
}

TEST(ExchangeModes, QuantizedRunsAreIdenticalWithAndWithoutOverlap) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 22);
  for (const char* scheme : {"uniform", "random"}) {
    for (bool cache : {true, false}) {
      const std::string what = std::string(scheme) + (cache ? ", cached" : ", exchanged");
      const TrainedRun quant = train(g, *comm, options("quant", scheme, 2, cache));
      const TrainedRun overlapped = train(g, *comm, options("adaqp", scheme, 2, cache));
      expect_identical(quant, overlapped, what);
      if (comm->size() > 1) {
        // Quantization does change the training: the comparison is not vacuous.
        const TrainedRun vanilla = train(g, *comm, options("vanilla", scheme, 2, cache));
        EXPECT_NE(vanilla.epochs[kEpochs - 1].loss, quant.epochs[kEpochs - 1].loss) << what;
      }
    }
  }
}

TEST(ExchangeModes, FeatureCacheChangesOnlyTheBytes) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 23);
  const Part part = test::my_part(g, *comm);
  const TrainedRun cached = train(g, *comm, options("vanilla", "uniform", 8, true));
  const TrainedRun exchanged = train(g, *comm, options("vanilla", "uniform", 8, false));
  expect_identical(cached, exchanged, "feature cache");
  // Layer 0's boundary rows, forward only (no gradient flows back to the features).
  const int64_t layer0 = static_cast<int64_t>(part.send_idx.size()) * part.feat_dim * 4;
  for (int e = 0; e < kEpochs; ++e) {
    EXPECT_EQ(exchanged.epochs[e].bytes_sent - cached.epochs[e].bytes_sent, layer0);
    EXPECT_EQ(cached.epochs[e].bytes_forward[0], 0);
    EXPECT_EQ(exchanged.epochs[e].bytes_forward[0], layer0);
  }
  if (comm->size() > 1) {
    EXPECT_GT(layer0, 0);
  }
}

// Evaluation runs at full precision in every mode: the parameters a quantized run trained, put
// into a Vanilla trainer, score there what they scored in the quantized one (loss and accuracies
// to the bit) and predict the same classes. An evaluation through the training's widths would add
// their noise to every reported score.
TEST(ExchangeModes, EvaluationIsAtFullPrecisionInEveryMode) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 24);
  for (const auto& [mode, scheme] : {std::pair{"quant", "uniform"}, std::pair{"adaqp", "random"},
                                     std::pair{"adaqp", "adaptive"}}) {
    const std::string what = std::string(mode) + ", " + scheme;
    TrainerOptions opt = options(mode, scheme, 2, false);
    // The adaptive scheme's link model given (a slow link: it quantizes), not probed.
    for (int r = 0; r < comm->size(); ++r) opt.link_costs.push_back({1e-5, 1e-7});
    Trainer quantized(test::my_part(g, *comm), *comm, opt);
    for (int e = 1; e <= kEpochs; ++e) quantized.train_epoch(e);
    Trainer vanilla(test::my_part(g, *comm), *comm, options("vanilla", "uniform", 8, false));
    vanilla.restore(quantized.snapshot(kEpochs));
    ASSERT_EQ(vanilla.parameter_values(), quantized.parameter_values()) << what;
    const EvalScores q = quantized.evaluate(), v = vanilla.evaluate();
    EXPECT_EQ(q.valid_loss, v.valid_loss) << what;
    EXPECT_EQ(q.train, v.train) << what;
    EXPECT_EQ(q.valid, v.valid) << what;
    EXPECT_EQ(q.test, v.test) << what;
    EXPECT_EQ(quantized.predict().bytes, vanilla.predict().bytes) << what;
  }
}

TEST(ExchangeModes, QuantizedBytesArePackedCodesPlusMetadata) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 24);
  const Part part = test::my_part(g, *comm);
  const auto boundary = static_cast<int64_t>(part.send_idx.size());
  const int64_t halo = part.num_halo();
  for (int bits : {2, 4, 8}) {
    for (bool cache : {true, false}) {
      const TrainedRun run = train(g, *comm, options("adaqp", "uniform", bits, cache));
      const int64_t hidden_row = quant::packed_row_bytes(kHidden, bits) + 8;
      const int64_t feature_row = quant::packed_row_bytes(part.feat_dim, bits) + 8;
      // The last layer narrows (hidden -> classes), so it aggregates its output-width rows.
      const int64_t out_row = quant::packed_row_bytes(part.num_classes, bits) + 8;
      for (const EpochStats& st : run.epochs) {
        const std::vector<int64_t> fwd = {cache ? 0 : boundary * feature_row, boundary * hidden_row,
                                          boundary * out_row};
        const std::vector<int64_t> bwd = {0, halo * hidden_row, halo * out_row};
        EXPECT_EQ(st.bytes_forward, fwd) << bits << " bits, epoch " << st.epoch;
        EXPECT_EQ(st.bytes_backward, bwd) << bits << " bits, epoch " << st.epoch;
        EXPECT_EQ(st.bytes_sent, fwd[0] + fwd[1] + fwd[2] + bwd[1] + bwd[2]);
      }
    }
  }
}

// The cover layout at full precision: the same training up to the summation order (1e-5 relative on
// every loss, parameters within 1e-5), with and without overlap and the feature cache; every
// exchange moves its boundary's rows; each rank receives from each peer at most as many rows as
// the rows layout would (a minimum cover is no larger than the pair's sources), and over the
// ranks fewer.
TEST(ExchangeLayouts, CoverReproducesRowsWithFewerRows) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 26);
  const Part part = test::my_part(g, *comm);
  for (const char* mode : {"vanilla", "overlap"}) {
    for (bool cache : {true, false}) {
      const std::string what = std::string(mode) + (cache ? ", cached" : ", exchanged");
      const TrainedRun rows = train(g, *comm, options(mode, "uniform", 8, cache));
      const TrainedRun cover =
          train(g, *comm, options(mode, "uniform", 8, cache, ExchangeLayout::kCover));
      for (int e = 0; e < kEpochs; ++e) {
        EXPECT_NEAR(cover.epochs[e].loss, rows.epochs[e].loss, 1e-5 * std::abs(rows.epochs[e].loss))
            << what << ", epoch " << e + 1;
        const int64_t row_floats = (cache ? 0 : cover.sends * part.feat_dim) +
                                   (cover.sends + cover.recvs) * (kHidden + part.num_classes);
        EXPECT_EQ(cover.epochs[e].bytes_sent, 4 * row_floats) << what;
      }
      ASSERT_EQ(cover.params.size(), rows.params.size());
      for (size_t i = 0; i < rows.params.size(); ++i) {
        ASSERT_NEAR(cover.params[i], rows.params[i], 1e-5) << what << ", parameter " << i;
      }
      EXPECT_LE(cover.recvs, part.num_halo()) << what;
      int64_t totals[2] = {cover.recvs, part.num_halo()};
      comm->allreduce_sum(totals, 2);
      if (comm->size() > 1) {
        EXPECT_LT(totals[0], totals[1]) << what << ": the cover saves no row on this graph";
      }
    }
  }
}

// A multigraph: every third in-edge of each node doubled. A partial sum then carries an edge twice
// and a source row's column appears twice in A'_halo, as in the rows layout.
Graph with_duplicate_edges(Graph g) {
  std::vector<int64_t> indptr{0}, indices;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t k = g.indptr[v]; k < g.indptr[v + 1]; ++k) {
      indices.push_back(g.indices[k]);
      if ((k - g.indptr[v]) % 3 == 0) indices.push_back(g.indices[k]);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  g.indptr = std::move(indptr);
  g.indices = std::move(indices);
  return g;
}

TEST(ExchangeLayouts, CoverCarriesDuplicateEdgesAsRowsDo) {
  const auto comm = test::world_comm();
  const Graph g = with_duplicate_edges(test::small_graph(240, 28));
  g.validate("multigraph");
  const TrainedRun rows = train(g, *comm, options("vanilla", "uniform", 8, true));
  const TrainedRun cover =
      train(g, *comm, options("vanilla", "uniform", 8, true, ExchangeLayout::kCover));
  for (int e = 0; e < kEpochs; ++e) {
    EXPECT_NEAR(cover.epochs[e].loss, rows.epochs[e].loss, 1e-5 * std::abs(rows.epochs[e].loss))
        << "epoch " << e + 1;
  }
}

// Quantized messages in the cover layout: bytes are the wire format of the boundary's rows, and the
// adaptive scheme plans over them (bytes within its all-8-bit cost).
TEST(ExchangeLayouts, QuantizedCoverSendsTheWireFormatOfItsRows) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 27);
  const Part part = test::my_part(g, *comm);
  for (int bits : {2, 8}) {
    const TrainedRun run =
        train(g, *comm, options("adaqp", "uniform", bits, true, ExchangeLayout::kCover));
    const int64_t hidden_row = quant::packed_row_bytes(kHidden, bits) + 8;
    const int64_t out_row = quant::packed_row_bytes(part.num_classes, bits) + 8;
    for (const EpochStats& st : run.epochs) {
      EXPECT_EQ(st.bytes_sent, (run.sends + run.recvs) * (hidden_row + out_row)) << bits;
    }
  }
  // The paper's objective: over a fast link the default (seconds) may send full precision.
  TrainerOptions adaptive_opt = options("adaqp", "adaptive", 8, true, ExchangeLayout::kCover);
  adaptive_opt.adaptive.objective = assign::Objective::kNormalized;
  const TrainedRun adaptive = train(g, *comm, adaptive_opt);
  const int64_t at8 =
      (adaptive.sends + adaptive.recvs) *
      (quant::packed_row_bytes(kHidden, 8) + quant::packed_row_bytes(part.num_classes, 8) + 16);
  for (const EpochStats& st : adaptive.epochs) {
    EXPECT_TRUE(std::isfinite(st.loss));
    EXPECT_LE(st.bytes_sent, at8);
  }
}

// |x^ - x| <= s = (M - m) / (2^b - 1) per element (s rounded up by at most a few ulps).
double step_bound(const at::Tensor& row, int bits) {
  const double range = (row.max() - row.min()).item<double>();
  return range / static_cast<double>((1 << bits) - 1) * (1 + 1e-5) + 1e-30;
}

TEST(ExchangeModes, RandomSchemeEndsAgreeOnEveryWidth) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(300, 25);
  const Part part = test::my_part(g, *comm);
  const Boundary boundary = row_boundary(part);
  HaloExchanger ex(boundary, &part.send_idx, *comm, HaloExchangerOptions{true, Device::cpu()});
  SchemeOptions so;
  so.scheme = BitScheme::kRandom;
  so.seed = 99;
  const uint32_t epoch = 4;
  const int layer = 1;
  const QuantPlan plan = scheme_plan(boundary, 2, so, epoch);
  Precision fwd{&plan.forward[layer], quant::QuantKey{so.seed, epoch}};
  Precision bwd{&plan.backward[layer], quant::QuantKey{so.seed, epoch}};
  const int64_t d = 33;
  const at::Tensor h_all = test::random_matrix(g.num_nodes, d, 5) * 3.0;

  // Forward: every received halo row is within its own width's step of the true row.
  const at::Tensor h = test::rows_of(h_all, part.owned_gid).contiguous();
  at::Tensor halo = at::zeros({part.num_halo(), d});
  ex.start_forward(h.data_ptr<float>(), d, halo.data_ptr<float>(),
                   ExchangeId{layer, Direction::kForward}, fwd);
  ex.finish_forward();
  const at::Tensor want = test::rows_of(h_all, part.halo_gid);
  int seen[9] = {};
  for (int64_t i = 0; i < part.num_halo(); ++i) {
    const int bits = random_bit_width(so.seed, epoch, layer, Direction::kForward, part.halo_gid[i]);
    ASSERT_EQ(bits, plan.forward[layer].recv[i]);
    ++seen[bits];
    const double err = (halo[i] - want[i]).abs().max().item<double>();
    ASSERT_LE(err, step_bound(want[i], bits)) << "halo row of node " << part.halo_gid[i];
  }
  if (part.num_halo() >= 30) {
    EXPECT_GT(seen[2], 0);
    EXPECT_GT(seen[4], 0);
    EXPECT_GT(seen[8], 0);
  }

  // Backward: every sender's halo row of node v is G[v]; the owner receives one quantized copy
  // per peer that has v as a halo node.
  const at::Tensor g_all = test::random_matrix(g.num_nodes, d, 6);
  const at::Tensor grads = test::rows_of(g_all, part.halo_gid).contiguous();
  ex.start_backward(grads.data_ptr<float>(), d, ExchangeId{layer, Direction::kBackward}, bwd);
  ex.finish_backward();
  at::Tensor dh = at::zeros({part.num_owned(), d});
  ex.add_received_gradients(dh.data_ptr<float>());
  std::vector<int> copies(part.num_owned(), 0);
  for (int64_t k : part.send_idx) ++copies[k];
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    const int64_t gid = part.owned_gid[i];
    const at::Tensor truth = g_all[gid];
    const int bits = random_bit_width(so.seed, epoch, layer, Direction::kBackward, gid);
    const double err = (dh[i] - truth * copies[i]).abs().max().item<double>();
    ASSERT_LE(err, copies[i] * step_bound(truth, bits) + 1e-5) << "boundary row of node " << gid;
  }
}

TEST(ExchangeModes, AdaptiveSchemeRejectsBadOptionsClearly) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(100, 26);
  for (const char* mode : {"adaqp", "quant"}) {
    TrainerOptions opt = options(mode, "adaptive", 8, true);
    opt.adaptive.lambda = 1.5;
    try {
      Trainer t(test::my_part(g, *comm), *comm, opt);
      FAIL() << "mode " << mode << " with lambda 1.5 was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("communication.lambda: 1.5 must be in [0, 1]"),
                std::string::npos)
          << e.what();
    }
  }
}

// A slow peer: rank 0 starts its exchange 300 ms late. On every other rank the overlapped
// aggregation finishes its A_local product before the exchange completes (the exchange waits for
// rank 0), while vanilla completes the exchange before starting the product.
TEST(ExchangeOverlap, LocalAggregationRunsWhileASlowPeerDelaysTheExchange) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::small_graph(400, 27);
  for (bool overlap : {true, false}) {
    DistGraphOptions opt;
    opt.norm = &conv_norm(ModelType::kGcn);
    opt.overlap = overlap;
    DistGraph graph(test::my_part(g, *comm), *comm, opt);
    if (overlap && !graph.exchanger().progress_thread()) {
      GTEST_SKIP() << "MPI provides no thread support for a progress thread";
    }
    const int64_t d = 16;
    const at::Tensor h = test::random_matrix(graph.num_owned(), d, 8);
    at::Tensor y = at::empty_like(h);
    comm->barrier();
    if (comm->rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    graph.aggregate(h.data_ptr<float>(), d, y.data_ptr<float>(), 1);
    if (comm->rank() == 0) continue;
    const ExchangeTrace& t = graph.exchanger().last_trace();
    const double local_done = graph.aggregation_stats().local_done_s;
    ASSERT_GT(t.completed_s, t.started_s);
    if (overlap) {
      EXPECT_LT(local_done, t.completed_s) << "A_local did not run while the exchange was pending";
      EXPECT_GT(t.completed_s - t.started_s, 0.1) << "the exchange did not wait for rank 0";
    } else {
      EXPECT_GT(local_done, t.completed_s) << "vanilla started A_local before the exchange ended";
    }
  }
}

// The fused aggregation and Linear (model/dist_aggregate.h) works while the rows travel: forward,
// the central rows' product runs after A_local and before the wait for the halo rows; backward, the
// central rows' input gradient and the weight gradient run after the partial gradients were sent
// and before the wait for the peers'. Each span between the exchange's timestamps must hold at
// least half (backward: 60%) of the fastest of five runs of that work alone: load only lengthens
// the spans; with the work moved out of them (values unchanged, every other test passing) they
// held 1-2% forward and 27% backward (A_local's transpose product, 2026-12-07).
TEST(ExchangeOverlap, TheFusedLinearComputesWhileTheRowsTravel) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::small_graph(6000, 31);
  DistGraphOptions opt;
  opt.norm = &conv_norm(ModelType::kGcn);
  opt.overlap = true;
  DistGraph graph(test::my_part(g, *comm), *comm, opt);
  if (!graph.exchanger().progress_thread()) {
    GTEST_SKIP() << "MPI provides no thread support for a progress thread";
  }
  const int layer = 1;
  const int64_t d = 512, n = graph.num_owned(), central = graph.part().num_central;
  ASSERT_GE(central, n / 4) << "too few central rows to time";
  const at::Tensor h = test::random_matrix(n, d, 3).requires_grad_(true);
  const at::Tensor weight = test::random_matrix(d, d, 4).mul_(0.05).requires_grad_(true);
  const at::Tensor bias = at::zeros({d}).requires_grad_(true);
  const at::Tensor z = test::random_matrix(n, d, 5), dy = test::random_matrix(n, d, 6);
  const auto fastest = [](const auto& work) {
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k < 5; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      work();
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  double forward_s = 0, backward_s = 0;
  {
    const at::NoGradGuard no_grad;
    forward_s = fastest([&] { at::addmm(bias, z.narrow(0, 0, central), weight.t()); });
    backward_s = fastest([&] {
      dy.narrow(0, 0, central).mm(weight);
      dy.t().mm(z);
    });
  }
  comm->barrier();
  const at::Tensor y = dist_aggregate_linear(h, weight, bias, at::Tensor(), graph, layer);
  const double local_done = graph.aggregation_stats().local_done_s;
  const ExchangeTrace forward = graph.exchanger().stats().trace_forward.at(layer);
  (y * dy).sum().backward();
  const ExchangeTrace backward = graph.exchanger().stats().trace_backward.at(layer);
  EXPECT_GE(forward.finish_s - local_done, 0.5 * forward_s)
      << "the central rows' product did not run between A_local and the wait for the halo rows";
  EXPECT_GE(backward.finish_s - backward.started_s, 0.6 * backward_s)
      << "the weight gradient did not run while the partial gradients travelled";
}

// Received partial gradients are added peer by peer in rank order (docs/design.md, section 7),
// never as they arrive: with each rank in turn starting its backward exchange 100 ms after the
// others, every rank's input gradient comes out the same to the bit, overlapped or not. The rows'
// scales span six orders of magnitude, so float sums taken in another order differ.
TEST(ExchangeOverlap, BackwardSumsDoNotDependOnTheOrderPeersArrive) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 3);
  const Graph g = test::small_graph(400, 29);
  for (bool overlap : {true, false}) {
    DistGraphOptions opt;
    opt.norm = &conv_norm(ModelType::kGcn);
    opt.overlap = overlap;
    DistGraph graph(test::my_part(g, *comm), *comm, opt);
    const int64_t d = 8;
    const at::Tensor scale =
        at::pow(10.0, at::arange(graph.num_owned(), at::kFloat).remainder(7) - 3).unsqueeze(1);
    const at::Tensor grad = (test::random_matrix(graph.num_owned(), d, 9) * scale).contiguous();
    std::vector<at::Tensor> dh;
    for (int late = 0; late < comm->size(); ++late) {
      dh.push_back(at::empty_like(grad));
      comm->barrier();
      if (comm->rank() == late) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      graph.aggregate_backward(grad.data_ptr<float>(), d, dh.back().data_ptr<float>(), 1);
      ASSERT_TRUE(at::equal(dh.back(), dh.front()))
          << (overlap ? "overlapped" : "vanilla") << ", rank " << late << " late";
    }
  }
}

// Large messages (rendezvous protocol: they move only while some thread is inside MPI) complete
// while every rank's caller is busy without calling MPI: the progress thread moves them.
TEST(ExchangeOverlap, ProgressThreadCompletesLargeMessagesDuringComputation) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::small_graph(400, 28);
  const Part part = test::my_part(g, *comm);
  const Boundary boundary = row_boundary(part);
  HaloExchanger ex(boundary, &part.send_idx, *comm, HaloExchangerOptions{true, Device::cpu()});
  if (!ex.progress_thread()) GTEST_SKIP() << "MPI provides no thread support for a progress thread";
  const int64_t d = 8192;  // 32 KiB rows: several MiB per peer
  std::vector<float> h(static_cast<size_t>(part.num_owned() * d), 1.5f);
  std::vector<float> halo(static_cast<size_t>(part.num_halo() * d), 0.0f);
  comm->barrier();
  ex.start_forward(h.data(), d, halo.data(), ExchangeId{1, Direction::kForward}, Precision{});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the "computation"
  ex.finish_forward();
  const ExchangeTrace& t = ex.last_trace();
  EXPECT_LT(t.completed_s, t.finish_s) << "the exchange completed only once the caller waited";
  EXPECT_TRUE(std::all_of(halo.begin(), halo.end(), [](float v) { return v == 1.5f; }));
  EXPECT_GT(static_cast<int64_t>(part.send_idx.size()) * d * 4, int64_t{1} << 20);
}

}  // namespace
}  // namespace adaqp
