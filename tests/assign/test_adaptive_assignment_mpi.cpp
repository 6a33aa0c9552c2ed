// The adaptive bit-width scheme on W = mpirun's world size workers (docs/design.md, sections 6 and
// 7): sender and receiver hold the same width for every message (checked against all ranks'
// widths gathered independently, by the bytes on the wire and by the dequantized rows staying
// within their width's error bound), the widths are optimal for a referee's problem built from the
// dense adjacency, the lambda endpoints give uniform widths, objective seconds decides full
// precision where the design says, and runs are reproducible.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "adaqp/assign/adaptive_policy.h"
#include "adaqp/assign/solve.h"
#include "adaqp/assign/time_model.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/quantizer.h"
#include "adaqp/train/trainer.h"
#include "dense_reference.h"
#include "mpi_skip.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

constexpr int64_t kWidth = 6;  // ceil(6 b / 8) is not a multiple of b
constexpr int kLayer = 1;

// Per-sender costs that differ by rank, so the budget search has something to balance.
std::vector<assign::LinkCost> link_costs(int world) {
  std::vector<assign::LinkCost> costs;
  for (int r = 0; r < world; ++r) costs.push_back({1e-5, 1e-8 * (1 + r)});
  return costs;
}

// Row `gid` of the test's embeddings: ranges spread over three orders of magnitude, so the
// solver gives different messages different widths.
std::vector<float> row_of(int64_t gid, uint64_t salt) {
  std::vector<float> row(kWidth);
  const double scale = std::exp(static_cast<double>((gid * 7 + salt) % 9) - 4.0);
  for (int64_t c = 0; c < kWidth; ++c) {
    row[c] = static_cast<float>(scale * std::sin(0.7 * gid + 1.3 * c + salt));
  }
  return row;
}

std::vector<float> owned_rows(const Part& part, uint64_t salt) {
  std::vector<float> h;
  for (int64_t gid : part.owned_gid) {
    const std::vector<float> row = row_of(gid, salt);
    h.insert(h.end(), row.begin(), row.end());
  }
  return h;
}

// Every rank's variable-length list, concatenated in rank order.
template <typename T>
std::vector<T> gather_all(Communicator& comm, const std::vector<T>& mine) {
  const int world = comm.size();
  const auto n = static_cast<int64_t>(mine.size());
  std::vector<int64_t> counts(world);
  comm.allgather(&n, counts.data(), sizeof(int64_t));
  const int64_t most = std::max<int64_t>(*std::max_element(counts.begin(), counts.end()), 1);
  std::vector<T> padded(mine), all(most * world);
  padded.resize(most);
  comm.allgather(padded.data(), all.data(), most * sizeof(T));
  std::vector<T> out;
  for (int r = 0; r < world; ++r) out.insert(out.end(), &all[r * most], &all[r * most] + counts[r]);
  return out;
}

// (direction, sender, receiver, node) -> width of every message of layer kLayer, as the senders
// (sending = true) or the receivers see them, over all ranks.
std::map<std::vector<int64_t>, int64_t> widths_seen(Communicator& comm, const Boundary& part,
                                                    const QuantPlan& plan, bool sending) {
  std::vector<int64_t> mine;
  for (Direction dir : {Direction::kForward, Direction::kBackward}) {
    const MessageBits& mb = (dir == Direction::kForward ? plan.forward : plan.backward)[kLayer];
    const std::vector<int64_t>& gids = sending ? send_keys(part, dir) : recv_keys(part, dir);
    const std::vector<int64_t>& offsets =
        sending ? send_offsets(part, dir) : recv_offsets(part, dir);
    const std::vector<uint8_t>& bits = sending ? mb.send : mb.recv;
    for (int r = 0; r < part.num_parts; ++r) {
      for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
        const int64_t sender = sending ? part.rank : r, receiver = sending ? r : part.rank;
        mine.insert(mine.end(), {static_cast<int64_t>(dir), sender, receiver, gids[k], bits[k]});
      }
    }
  }
  const std::vector<int64_t> all = gather_all(comm, mine);
  std::map<std::vector<int64_t>, int64_t> seen;
  for (size_t i = 0; i < all.size(); i += 5)
    seen[{all[i], all[i + 1], all[i + 2], all[i + 3]}] = all[i + 4];
  return seen;
}

// How many distinct widths the messages of `sent` (widths_seen) travel at.
size_t distinct_widths(const std::map<std::vector<int64_t>, int64_t>& sent) {
  std::map<int64_t, int64_t> per_width;
  for (const auto& [key, bits] : sent) ++per_width[bits];
  return per_width.size();
}

int64_t wire_bytes(const std::vector<uint8_t>& bits) {
  int64_t bytes = 0;
  for (uint8_t b : bits) bytes += quant::message_bytes(kWidth, b);
  return bytes;
}

// This rank's part of the test graph `g`, with GCN's edge weights.
std::unique_ptr<DistGraph> gcn_graph(const Graph& g, Communicator& comm, bool overlap = false) {
  DistGraphOptions gopt;
  gopt.norm = &conv_norm(ModelType::kGcn);
  gopt.overlap = overlap;
  return std::make_unique<DistGraph>(test::my_part(g, comm), comm, gopt);
}

class AdaptiveExchange : public ::testing::TestWithParam<assign::Solver> {};

TEST_P(AdaptiveExchange, BothEndsAgreeAndHaloRowsStayWithinTheirWidthsBound) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 31);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const Part& part = graph.part();
  AdaptiveOptions aopt;
  aopt.solver = GetParam();
  // A measured codec time makes each run's instance different; the MILP's branch and bound time
  // depends on the instance (one CI run took GLPK past its 60 s limit), so the exact referee is
  // tested on the reproducible model without it. With the codec's time in the model, objective
  // seconds would rightly send this slow link's small rows at full precision: the paper's
  // objective keeps them quantized (the exact referee, without codec time, plans in seconds).
  const bool measured_times = GetParam() == assign::Solver::kFast;
  if (measured_times) aopt.objective = assign::Objective::kNormalized;
  AdaptivePolicy assigner(graph.boundary(), graph.a_halo(), *comm,
                          assign::per_sender_time_model(link_costs(comm->size())),
                          /*layers=*/2, aopt, /*seed=*/5, measured_times);
  const std::vector<float> h = owned_rows(part, 0), grad = owned_rows(part, 3);
  std::vector<float> y(h.size()), dh(h.size()), exact(h.size());
  QuantPlan plan;
  double codec_s[2] = {0, 0};  // this rank's quantization time of the last epoch's exchanges
  // With measured times the first plan waits for a second traced epoch (the first one's codec
  // time is a cold start's). Objective seconds (the exact referee) has nothing to solve alone.
  const int first_solve = measured_times ? 3 : 2;
  const bool solves = comm->size() > 1 || aopt.objective == assign::Objective::kNormalized;
  for (int epoch = 1; epoch <= first_solve; ++epoch) {
    plan = assigner.plan(epoch, graph.message_traces());
    graph.set_quant_plan(&plan);
    graph.reset_comm_stats();
    graph.aggregate(h.data(), kWidth, y.data(), kLayer);
    graph.aggregate_backward(grad.data(), kWidth, dh.data(), kLayer);
    graph.set_quant_plan(nullptr);
    const AssignStats& st = *assigner.finish_epoch(graph.comm_stats(), graph.message_traces());
    EXPECT_EQ(st.solved, epoch == first_solve && solves) << "epoch " << epoch;
    // Measured from the last rank's start, an exchange cannot take longer than on this rank's own
    // clock from its own start (the ranks share one host's clock: the offsets are tiny; 1 s covers
    // their estimation error); layers not exchanged measure 0.
    const CommStats& cs = graph.comm_stats();
    ASSERT_EQ(st.measured_forward_s.size(), 2u);
    ASSERT_EQ(st.measured_backward_s.size(), 2u);
    EXPECT_EQ(st.measured_forward_s[1 - kLayer], 0.0);
    EXPECT_EQ(st.measured_backward_s[1 - kLayer], 0.0);
    EXPECT_GE(st.measured_forward_s[kLayer], 0.0);
    EXPECT_GE(st.measured_backward_s[kLayer], 0.0);
    if (comm->size() > 1) {
      ASSERT_GT(cs.comm_forward_s.size(), static_cast<size_t>(kLayer));
      ASSERT_GT(cs.comm_backward_s.size(), static_cast<size_t>(kLayer));
      EXPECT_LE(st.measured_forward_s[kLayer], cs.comm_forward_s[kLayer] + 1.0);
      EXPECT_LE(st.measured_backward_s[kLayer], cs.comm_backward_s[kLayer] + 1.0);
      // From the traces themselves: this rank's completion after the last rank's start (one host,
      // one steady clock: the policy's offsets are estimates of 0, off by at most half a ping-pong,
      // which oversubscribed ranks can stretch to milliseconds: 0.1 s). The rank whose start the
      // policy reads as the last measures its own exchange, more than 0, whatever the offsets.
      const ExchangeTrace* measured_traces[2] = {&cs.trace_forward[kLayer],
                                                 &cs.trace_backward[kLayer]};
      const double measured[2] = {st.measured_forward_s[kLayer], st.measured_backward_s[kLayer]};
      double last_start[2] = {measured_traces[0]->started_s, measured_traces[1]->started_s};
      comm->allreduce_max(last_start, 2);
      double most[2] = {measured[0], measured[1]};
      comm->allreduce_max(most, 2);
      for (int k = 0; k < 2; ++k) {
        EXPECT_NEAR(measured[k], std::max(0.0, measured_traces[k]->completed_s - last_start[k]),
                    0.1)
            << "epoch " << epoch << (k == 0 ? " forward" : " backward");
        EXPECT_GT(most[k], 0.0) << "epoch " << epoch << (k == 0 ? " forward" : " backward");
      }
      // The prediction: the slowest sender's link time for the bytes it sent, plus (measured_times)
      // its quantization time of the same exchange in the previous epoch (0 in the first).
      const MessageBits* sent_bits[2] = {&plan.forward[kLayer], &plan.backward[kLayer]};
      const ExchangeTrace* traces[2] = {&cs.trace_forward[kLayer], &cs.trace_backward[kLayer]};
      double expected[2];
      for (int k = 0; k < 2; ++k) {
        const assign::LinkCost c = link_costs(comm->size())[part.rank];
        expected[k] = c.alpha + c.beta * static_cast<double>(wire_bytes(sent_bits[k]->send)) +
                      (measured_times ? codec_s[k] : 0.0);
      }
      comm->allreduce_max(expected, 2);
      EXPECT_DOUBLE_EQ(st.predicted_forward_s[kLayer], expected[0]) << "epoch " << epoch;
      EXPECT_DOUBLE_EQ(st.predicted_backward_s[kLayer], expected[1]) << "epoch " << epoch;
      for (int k = 0; k < 2; ++k) {
        EXPECT_GT(traces[k]->quant_s, 0.0);
        codec_s[k] = traces[k]->quant_s;
      }
    }
  }

  // The ranges of the last epoch's backward messages, as this rank's codec traced them (send
  // order).
  const MessageTrace* backward_trace = graph.message_traces().find(kLayer, Direction::kBackward);
  const std::vector<float> sent_ranges =
      backward_trace != nullptr ? backward_trace->ranges : std::vector<float>{};

  // The widths every receiver decodes with are the ones its senders chose, message by message.
  const auto sent = widths_seen(*comm, graph.boundary(), plan, true);
  const auto received = widths_seen(*comm, graph.boundary(), plan, false);
  EXPECT_EQ(sent, received);
  if (comm->size() > 1) {
    EXPECT_GE(distinct_widths(sent), 2u) << "the solver gave every message the same width";
  }

  // The bytes on the wire are exactly the packed blocks of the chosen widths.
  const CommStats& cs = graph.comm_stats();
  EXPECT_EQ(cs.bytes_forward[kLayer], wire_bytes(plan.forward[kLayer].send));
  EXPECT_EQ(cs.bytes_backward[kLayer], wire_bytes(plan.backward[kLayer].send));

  // y = A h with every halo row off by at most one quantization step of its width per element.
  graph.aggregate(h.data(), kWidth, exact.data(), kLayer);
  const kernels::CsrView& a = graph.a_halo();
  for (int64_t i = 0; i < a.rows; ++i) {
    double bound = 1e-4;  // float rounding of the sums
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const int64_t j = a.indices[k];
      const std::vector<float> row = row_of(part.halo_gid[j], 0);
      const auto [lo, hi] = std::minmax_element(row.begin(), row.end());
      const int bits = plan.forward[kLayer].recv[j];
      bound += std::abs(a.values[k]) * (*hi - *lo) / ((1 << bits) - 1) * (1 + 1e-5);
    }
    for (int64_t c = 0; c < kWidth; ++c) {
      ASSERT_LE(std::abs(y[i * kWidth + c] - exact[i * kWidth + c]), bound)
          << "owned row " << i << " (node " << part.owned_gid[i] << "), element " << c;
    }
  }

  // dh = A^T grad with every returned copy of a boundary row off by at most one step of its width
  // per element, the step from the range its sender traced (sent to the copy's receiver here).
  const Boundary& b = graph.boundary();
  const MessageBits& back = plan.backward[kLayer];
  std::vector<float> copy_ranges(static_cast<size_t>(b.sends()), 0.0F);
  if (!back.full_precision && comm->size() > 1) {
    ASSERT_EQ(static_cast<int64_t>(sent_ranges.size()), b.recvs());
    ExchangeBuffers buffers = ExchangeBuffers::none(comm->size());
    for (int r = 0; r < comm->size(); ++r) {
      if (r == comm->rank()) continue;
      buffers.send[r] = sent_ranges.data() + b.recv_offsets[r];
      buffers.send_bytes[r] = static_cast<size_t>(b.recv_count_from(r)) * sizeof(float);
      buffers.recv[r] = copy_ranges.data() + b.send_offsets[r];
      buffers.recv_bytes[r] = static_cast<size_t>(b.send_count_to(r)) * sizeof(float);
    }
    comm->exchange(buffers, ExchangeOptions(9))->wait();
  }
  // Exact where the copies travel at full precision (the exchange's or the message's: no widths).
  std::vector<double> dh_bound(static_cast<size_t>(part.num_owned()), 1e-4);
  for (int64_t k = 0; k < b.sends() && !back.full_precision; ++k) {
    const int bits = back.recv[k];
    if (bits < quant::kFullPrecisionBits)
      dh_bound[part.send_idx[k]] += copy_ranges[k] / ((1 << bits) - 1) * (1 + 1e-5);
  }
  std::vector<float> exact_dh(grad.size());
  graph.aggregate_backward(grad.data(), kWidth, exact_dh.data(), kLayer);
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    for (int64_t c = 0; c < kWidth; ++c) {
      ASSERT_LE(std::abs(dh[i * kWidth + c] - exact_dh[i * kWidth + c]), dh_bound[i])
          << "owned row " << i << " (node " << part.owned_gid[i] << "), element " << c;
    }
  }
}

std::string solver_name(const ::testing::TestParamInfo<assign::Solver>& info) {
  return assign::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(Solvers, AdaptiveExchange,
                         ::testing::Values(assign::Solver::kFast, assign::Solver::kExact),
                         solver_name);

// The solve's independent problems (here layers 1 and 2, forward and backward: four) run on the
// compute threads: the widths must be those of one thread, message by message, at both ends.
TEST(AdaptiveExchangeThreads, WidthsDoNotDependOnTheComputeThreads) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(4000, 35);  // solves long enough for the threads to overlap
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const Part& part = graph.part();
  // Two identical policies on the reproducible time model (no measured codec time).
  constexpr int kLayers = 3;
  std::vector<std::unique_ptr<AdaptivePolicy>> policies;
  for (int i = 0; i < 2; ++i) {
    policies.push_back(std::make_unique<AdaptivePolicy>(
        graph.boundary(), graph.a_halo(), *comm,
        assign::per_sender_time_model(link_costs(comm->size())), kLayers, AdaptiveOptions{},
        /*seed=*/5, /*measured_times=*/false));
  }
  // One epoch at the first plan's widths traces the rows' ranges.
  const QuantPlan first = policies[0]->plan(1, graph.message_traces());
  policies[1]->plan(1, graph.message_traces());
  graph.set_quant_plan(&first);
  for (int layer = 1; layer < kLayers; ++layer) {
    const std::vector<float> h = owned_rows(part, layer), grad = owned_rows(part, 3 + layer);
    std::vector<float> y(h.size()), dh(h.size());
    graph.aggregate(h.data(), kWidth, y.data(), layer);
    graph.aggregate_backward(grad.data(), kWidth, dh.data(), layer);
  }
  graph.set_quant_plan(nullptr);

  const int threads = at::get_num_threads();
  set_compute_threads(1);
  const QuantPlan one = policies[0]->plan(2, graph.message_traces());
  set_compute_threads(4);
  const QuantPlan four = policies[1]->plan(2, graph.message_traces());
  set_compute_threads(threads);
  for (const auto& [what, a, b] : {std::tuple{"forward", &one.forward, &four.forward},
                                   std::tuple{"backward", &one.backward, &four.backward}}) {
    for (int layer = 1; layer < kLayers; ++layer) {
      EXPECT_EQ((*a)[layer].send, (*b)[layer].send) << what << " widths sent, layer " << layer;
      EXPECT_EQ((*a)[layer].recv, (*b)[layer].recv) << what << " widths received, layer " << layer;
    }
  }
  if (comm->size() > 1) {
    for (int layer = 1; layer < kLayers; ++layer) {  // both layers solved, not left at 8 bits
      int64_t narrower =
          std::count_if(one.forward[layer].send.begin(), one.forward[layer].send.end(),
                        [](uint8_t b) { return b < 8; });
      comm->allreduce_sum(&narrower, 1);
      EXPECT_GT(narrower, 0) << "layer " << layer;
    }
    EXPECT_GE(distinct_widths(widths_seen(*comm, graph.boundary(), one, true)), 2u)
        << "the solver gave every message the same width";
  }
}

constexpr int kAdaptiveEpochs = 4;

TrainerOptions options(const std::string& scheme, int bits, double lambda) {
  TrainerOptions opt;
  opt.model.type = ModelType::kGcn;
  opt.model.layers = 3;
  opt.model.hidden = 10;
  opt.model.dropout = 0.5;
  opt.seed = 7;
  opt.mode = CommMode::kAdaqp;
  opt.scheme = parse_bit_scheme(scheme);
  opt.bits = bits;
  opt.adaptive.lambda = lambda;
  return opt;
}

struct AdaptiveRun {
  std::vector<EpochStats> epochs;
  std::vector<float> params;
};

AdaptiveRun train_adaptive(const Graph& g, Communicator& comm, TrainerOptions opt) {
  if (opt.scheme == BitScheme::kAdaptive) opt.link_costs = link_costs(comm.size());
  Trainer t(test::my_part(g, comm), comm, opt);
  AdaptiveRun run;
  for (int e = 1; e <= kAdaptiveEpochs; ++e) run.epochs.push_back(t.train_epoch(e));
  run.params = t.parameter_values();
  return run;
}

void expect_identical_runs(const AdaptiveRun& a, const AdaptiveRun& b, const std::string& what) {
  for (int e = 0; e < kAdaptiveEpochs; ++e) {
    EXPECT_EQ(a.epochs[e].loss, b.epochs[e].loss) << what << ", epoch " << e + 1;
    EXPECT_EQ(a.epochs[e].bytes_forward, b.epochs[e].bytes_forward) << what << ", epoch " << e + 1;
    EXPECT_EQ(a.epochs[e].bytes_backward, b.epochs[e].bytes_backward) << what;
  }
  ASSERT_EQ(a.params, b.params) << what;
}

TEST(AdaptiveTraining, LambdaOneSendsEverythingAtEightBits) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 32);
  // Widths of 8 everywhere and the same noise keys: bit-identical to the uniform 8-bit scheme.
  // (The paper's objective: in seconds, lambda = 1 means full precision.)
  TrainerOptions opt = options("adaptive", 8, 1.0);
  opt.adaptive.objective = assign::Objective::kNormalized;
  const AdaptiveRun adaptive = train_adaptive(g, *comm, opt);
  expect_identical_runs(adaptive, train_adaptive(g, *comm, options("uniform", 8, 0.5)), "lambda 1");
  for (const EpochStats& st : adaptive.epochs) {
    for (const auto& h : st.assign.hist_backward) EXPECT_EQ(h[0] + h[1], 0);
  }
}

TEST(AdaptiveTraining, LambdaZeroSendsEverythingAtTwoBitsOnceTraced) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 33);
  const AdaptiveRun adaptive = train_adaptive(g, *comm, options("adaptive", 8, 0.0));
  const AdaptiveRun two = train_adaptive(g, *comm, options("uniform", 2, 0.5));
  const AdaptiveRun eight = train_adaptive(g, *comm, options("uniform", 8, 0.5));
  // Epoch 1 has no trace yet: the largest width.
  EXPECT_EQ(adaptive.epochs[0].bytes_forward, eight.epochs[0].bytes_forward);
  EXPECT_EQ(adaptive.epochs[0].bytes_backward, eight.epochs[0].bytes_backward);
  for (int e = 1; e < kAdaptiveEpochs; ++e) {
    EXPECT_EQ(adaptive.epochs[e].bytes_forward, two.epochs[e].bytes_forward) << "epoch " << e + 1;
    EXPECT_EQ(adaptive.epochs[e].bytes_backward, two.epochs[e].bytes_backward);
    for (const auto& h : adaptive.epochs[e].assign.hist_forward) EXPECT_EQ(h[1] + h[2], 0);
  }
}

// Rows of 2 values cost 9 bytes at 2 bits and at 4 (8 of metadata and one of codes): at lambda = 0
// (time only) the messages of the layer that exchanges the 2 classes' rows go at 4 bits, less noise
// for no time, and the run sends exactly the bytes of the uniform 2-bit scheme.
TEST(AdaptiveTraining, LambdaZeroGivesTwoValueRowsFourBitsForTheBytesOfTwo) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::small_graph(240, 34, 2);
  TrainerOptions opt = options("adaptive", 8, 0.0);
  opt.adaptive.objective = assign::Objective::kNormalized;
  const AdaptiveRun adaptive = train_adaptive(g, *comm, opt);
  const AdaptiveRun two = train_adaptive(g, *comm, options("uniform", 2, 0.5));
  int64_t at_four = 0;
  for (int e = 1; e < kAdaptiveEpochs; ++e) {
    const EpochStats& st = adaptive.epochs[e];
    EXPECT_EQ(st.bytes_forward, two.epochs[e].bytes_forward) << "epoch " << e + 1;
    EXPECT_EQ(st.bytes_backward, two.epochs[e].bytes_backward) << "epoch " << e + 1;
    for (const auto* hists : {&st.assign.hist_forward, &st.assign.hist_backward}) {
      for (const auto& h : *hists) {
        EXPECT_EQ(h[2] + h[3], 0) << "epoch " << e + 1;  // never 8 bits or full precision
        EXPECT_TRUE(h[0] == 0 || h[1] == 0) << "epoch " << e + 1 << ": one width a layer";
        at_four += h[1];
      }
    }
  }
  comm->allreduce_sum(&at_four, 1);
  EXPECT_GT(at_four, 0) << "no layer's 2-value rows went at 4 bits";
}

TEST(AdaptiveTraining, SameSeedGivesIdenticalRunsAndThePeriodIsKept) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 34);
  TrainerOptions opt = options("adaptive", 8, 0.5);
  opt.adaptive.period = 2;
  opt.adaptive.resolve_drift = 0;                           // every due epoch solves
  opt.adaptive.objective = assign::Objective::kNormalized;  // also alone (W = 1: no messages)
  const AdaptiveRun a = train_adaptive(g, *comm, opt);
  expect_identical_runs(a, train_adaptive(g, *comm, opt), "same seed");
  std::vector<int64_t> per_width(3, 0);
  for (int e = 0; e < kAdaptiveEpochs; ++e) {
    EXPECT_EQ(a.epochs[e].assign.solved, e == 1 || e == 3) << "epoch " << e + 1;
    for (const auto& h : a.epochs[e].assign.hist_backward) {
      for (int b = 0; b < 3; ++b) per_width[b] += h[b];
    }
  }
  comm->allreduce_sum(per_width.data(), per_width.size());
  if (comm->size() > 1) {
    EXPECT_LE(std::count(per_width.begin(), per_width.end(), 0), 1)
        << "every message at one width: the run does not exercise mixed widths";
  }
}

// One epoch of layer kLayer's exchanges (forward rows of h, backward rows of grad) under `policy`'s
// plan for `epoch`; returns the plan used (a copy) and the epoch's statistics.
struct PlannedEpoch {
  QuantPlan plan;
  AssignStats stats;
  CommStats comm;
};

PlannedEpoch run_epoch(AdaptivePolicy& policy, DistGraph& graph, int epoch,
                       const std::vector<float>& h, const std::vector<float>& grad,
                       double extra_s = 0) {
  PlannedEpoch out;
  out.plan = policy.plan(epoch, graph.message_traces());
  // An epoch made slower on purpose (the measured check of full precision times whole epochs).
  if (extra_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(extra_s));
  std::vector<float> y(h.size()), dh(grad.size());
  graph.set_quant_plan(&out.plan);
  graph.reset_comm_stats();
  graph.aggregate(h.data(), kWidth, y.data(), kLayer);
  graph.aggregate_backward(grad.data(), kWidth, dh.data(), kLayer);
  graph.set_quant_plan(nullptr);
  out.stats = *policy.finish_epoch(graph.comm_stats(), graph.message_traces());
  out.comm = graph.comm_stats();
  // The reported histogram is the plan's widths, message by message, and the bytes on the wire.
  for (Direction dir : {Direction::kForward, Direction::kBackward}) {
    const bool fwd = dir == Direction::kForward;
    const MessageBits& mb = (fwd ? out.plan.forward : out.plan.backward)[kLayer];
    std::array<int64_t, quant::kNumMessageWidths> counted{};
    for (uint8_t b : mb.send) {
      ++counted[quant::message_width_index(mb.full_precision ? quant::kFullPrecisionBits : b)];
    }
    const auto& reported = (fwd ? out.stats.hist_forward : out.stats.hist_backward).at(kLayer);
    EXPECT_EQ(reported, counted) << "epoch " << epoch << (fwd ? " forward" : " backward");
    int64_t bytes = 0;
    for (int w = 0; w < quant::kNumMessageWidths; ++w) {
      bytes += reported[w] * quant::message_bytes(kWidth, quant::message_width(w));
    }
    const std::vector<int64_t>& wire = fwd ? out.comm.bytes_forward : out.comm.bytes_backward;
    EXPECT_EQ(bytes, wire.size() > kLayer ? wire[kLayer] : 0)
        << "epoch " << epoch << (fwd ? " forward" : " backward");
  }
  return out;
}

// The measured checks' setting (objective seconds, measured times) on a link too fast to price:
// the test graph, the rows of layer kLayer's exchanges, and a fresh policy for each case.
struct FastLink {
  FastLink(Communicator& comm, bool overlap)
      : g(test::small_graph(240, 36)),
        graph(gcn_graph(g, comm, overlap)),
        h(owned_rows(graph->part(), 0)),
        grad(owned_rows(graph->part(), 3)),
        comm_(comm) {}

  AdaptivePolicy policy() const {
    const std::vector<assign::LinkCost> fast(comm_.size(), {0.0, 1e-15});
    return AdaptivePolicy(graph->boundary(), graph->a_halo(), comm_,
                          assign::per_sender_time_model(fast), /*layers=*/2, AdaptiveOptions{},
                          /*seed=*/5, /*measured_times=*/true);
  }

  const Graph g;
  const std::unique_ptr<DistGraph> graph;
  const std::vector<float> h, grad;

 private:
  Communicator& comm_;
};

// Objective seconds over a link so fast that no width saves the codec's time: after the first
// epoch (8 bits: it traces the rows and measures the codec), every exchange travels at full
// precision without a solve: float32 rows, no codec time, counted as full-precision messages.
TEST(AdaptiveSeconds, AFastLinkSendsEveryExchangeAtFullPrecision) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 36);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const std::vector<assign::LinkCost> fast(comm->size(), {0.0, 1e-15});
  AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                        assign::per_sender_time_model(fast), /*layers=*/2, AdaptiveOptions{},
                        /*seed=*/5, /*measured_times=*/true);
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  const int64_t sends = graph.boundary().sends(), recvs = graph.boundary().recvs();
  for (int epoch = 1; epoch <= 4; ++epoch) {
    const PlannedEpoch e = run_epoch(policy, graph, epoch, h, grad);
    // Two traced epochs first (measured times); also at W = 1: nothing to send, nothing to save.
    const bool full = epoch > 2;
    EXPECT_EQ(e.plan.forward[kLayer].full_precision, full) << "epoch " << epoch;
    EXPECT_EQ(e.plan.backward[kLayer].full_precision, full) << "epoch " << epoch;
    EXPECT_FALSE(e.stats.solved) << "epoch " << epoch << ": nothing to trade, nothing to solve";
    if (comm->size() == 1) continue;
    if (full) {
      EXPECT_EQ(e.comm.bytes_forward[kLayer], sends * quant::full_precision_bytes(kWidth));
      EXPECT_EQ(e.comm.bytes_backward[kLayer], recvs * quant::full_precision_bytes(kWidth));
      EXPECT_EQ(e.comm.quant_time_s, 0.0);
      EXPECT_EQ(e.stats.hist_forward[kLayer][quant::kNumWidths], sends);
      EXPECT_EQ(e.stats.hist_backward[kLayer][quant::kNumWidths], recvs);
    } else {
      EXPECT_EQ(e.comm.bytes_forward[kLayer], wire_bytes(e.plan.forward[kLayer].send));
      EXPECT_GT(e.comm.quant_time_s, 0.0);
    }
  }
}

// The measured check: where the epochs with exchanges at full precision (4 and 5 here, after the
// cold epoch 3) take longer than the last quantized one (epoch 2) by more than the margin, full
// precision is given up for the run: one epoch at the largest width, traced, then solved widths,
// never full precision again. Where they are no slower, full precision stays. 0.3 s of sleep
// stands in for the slower epochs, far beyond the epochs' own jitter. Either way Vanilla's
// schedule is then tried, also after full precision was given up, once two epochs have timed the
// plans decided (the check's 4 and 5 where full precision stays; 6 and 7, the second with its
// solve, where it was given up): three epochs run it at full precision (the first cold); its
// epochs made slower here, the plans before it come back (quantized where full precision was
// given up).
TEST(AdaptiveSeconds, FullPrecisionMeasuredSlowerIsGivenUp) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const FastLink c(*comm, /*overlap=*/false);
  DistGraph& graph = *c.graph;
  const std::vector<float>& h = c.h;
  const std::vector<float>& grad = c.grad;
  for (const bool full_slower : {true, false}) {
    AdaptivePolicy policy = c.policy();
    for (int epoch = 1; epoch <= 12; ++epoch) {
      const int first_trial = full_slower ? 8 : 6;
      const bool slow = (full_slower ? epoch == 4 || epoch == 5 : epoch == 2) ||
                        epoch == first_trial + 1 || epoch == first_trial + 2;
      const PlannedEpoch e = run_epoch(policy, graph, epoch, h, grad, slow ? 0.3 : 0.0);
      const bool full = e.plan.forward[kLayer].full_precision;
      EXPECT_EQ(e.plan.backward[kLayer].full_precision, full) << "epoch " << epoch;
      // Epochs 1-2 traced at the largest width; the model then picks full precision.
      const bool trial = epoch >= first_trial && epoch <= first_trial + 2;
      bool want_full = (epoch >= 3 && epoch <= 5) || trial;
      if (!full_slower) want_full = epoch > 2;
      EXPECT_EQ(full, want_full) << (full_slower ? "slower" : "faster") << ", epoch " << epoch;
      EXPECT_EQ(e.plan.overlap, !trial) << "epoch " << epoch;
      EXPECT_EQ(e.stats.vanilla_schedule, trial) << "epoch " << epoch;
      // Reported from the epoch whose end found it (the last one timed, 5) on.
      EXPECT_EQ(e.stats.full_precision_given_up, full_slower && epoch >= 5) << "epoch " << epoch;
      if (full_slower && epoch == 6) {
        // Traced once more at the largest width before the solve.
        EXPECT_TRUE(std::all_of(e.plan.forward[kLayer].send.begin(),
                                e.plan.forward[kLayer].send.end(),
                                [](uint8_t b) { return b == quant::all_widths().back(); }));
      }
      if (full_slower && epoch == 7) {
        EXPECT_TRUE(e.stats.solved) << "solved after the traced epoch";
      }
    }
  }
}

// Full precision given up is checked again kTrialGap (16) epochs of the scheme later: epochs 1-10
// as above (given up at 5; 6 traced at the largest width, 7 solved; Vanilla's trial in 8-10, lost),
// 11-24 quantized, after which the model puts every exchange at full precision again (25 cold,
// 26-27 timed against the median of the latest quantized epochs, 21-24). Where those were slow
// (0.3 s of sleep), full precision is back for good, and the trial of Vanilla's schedule, due since
// 27, follows the check (28-30). Where the check's epochs are slow, full precision is given up
// again: 28 traced at the largest width, 29 solved, Vanilla's trial at 30.
TEST(AdaptiveSeconds, GivenUpFullPrecisionIsCheckedAgainAfterAWait) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const FastLink c(*comm, /*overlap=*/false);
  DistGraph& graph = *c.graph;
  for (const bool back : {true, false}) {
    AdaptivePolicy policy = c.policy();
    for (int epoch = 1; epoch <= 30; ++epoch) {
      const bool slow = epoch == 4 || epoch == 5 || epoch == 9 || epoch == 10 ||
                        (back ? epoch >= 21 && epoch <= 24 : epoch == 26 || epoch == 27);
      const PlannedEpoch e = run_epoch(policy, graph, epoch, c.h, c.grad, slow ? 0.3 : 0.0);
      const std::string what =
          std::string(back ? "back" : "given up again") + ", epoch " + std::to_string(epoch);
      const bool trial = (epoch >= 8 && epoch <= 10) || (back ? epoch >= 28 : epoch == 30);
      const bool full = (epoch >= 3 && epoch <= 5) || trial || (epoch >= 25 && epoch <= 27);
      EXPECT_EQ(e.plan.forward[kLayer].full_precision, full) << what;
      EXPECT_EQ(e.plan.backward[kLayer].full_precision, full) << what;
      EXPECT_EQ(e.stats.vanilla_schedule, trial) << what;
      const bool given_up = (epoch >= 5 && epoch <= 23) || (!back && epoch >= 27);
      EXPECT_EQ(e.stats.full_precision_given_up, given_up) << what;
      if (!back && epoch == 28) {
        EXPECT_TRUE(std::all_of(e.plan.forward[kLayer].send.begin(),
                                e.plan.forward[kLayer].send.end(),
                                [](uint8_t b) { return b == quant::all_widths().back(); }))
            << what << ": traced once more at the largest width";
      }
      if (!back && epoch == 29) {
        EXPECT_TRUE(e.stats.solved) << what;
      }
    }
  }
}

// Full precision given up (at 5, epochs 4-5 slow), then Vanilla's schedule kept against the
// quantized scheme (trial 8-10 against the slow 6-7) from 11 on: the scheme's trial after 16 of its
// epochs (27-29, Vanilla's 23-26 slow) runs the model's plans, full precision allowed, overlapped,
// and wins: from 30 on the scheme runs with every exchange at full precision again.
TEST(AdaptiveSeconds, ASchemeThatWinsBackFromVanillasScheduleBringsFullPrecisionBack) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const FastLink c(*comm, /*overlap=*/false);
  DistGraph& graph = *c.graph;
  AdaptivePolicy policy = c.policy();
  for (int epoch = 1; epoch <= 32; ++epoch) {
    const bool slow = (epoch >= 4 && epoch <= 7) || (epoch >= 23 && epoch <= 26);
    const PlannedEpoch e = run_epoch(policy, graph, epoch, c.h, c.grad, slow ? 0.3 : 0.0);
    const std::string what = "epoch " + std::to_string(epoch);
    const bool vanilla = epoch >= 8 && epoch <= 26;
    EXPECT_EQ(e.plan.overlap, !vanilla) << what;
    EXPECT_EQ(e.stats.vanilla_schedule, vanilla) << what;
    const bool full = epoch >= 3 && epoch != 6 && epoch != 7;
    EXPECT_EQ(e.plan.forward[kLayer].full_precision, full) << what;
    EXPECT_EQ(e.plan.backward[kLayer].full_precision, full) << what;
    EXPECT_EQ(e.stats.full_precision_given_up, epoch >= 5 && epoch <= 26) << what;
  }
}

// The trial of Vanilla's schedule on a fast link: epochs 1-2 traced, 3-5 the check of full
// precision (kept; its timed epochs 4-5 are the trial's reference), 6-8 the trial (Vanilla's
// schedule: full precision, no overlap; 6 cold). Epoch 2 sleeps longer than any other, so that
// the check of full precision keeps it whatever the machine's jitter. Where the trial's timed
// epochs beat the reference (0.3 s of sleep in epochs 4-5), every epoch from 9 on keeps
// Vanilla's schedule; where they are slower (the sleep in 7-8), the plans go back to overlapping,
// at full precision as before. The graph runs the schedule the plan asks for.
TEST(AdaptiveSeconds, VanillaScheduleIsTriedAndKeptWhereFaster) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const FastLink c(*comm, /*overlap=*/true);
  DistGraph& graph = *c.graph;
  const std::vector<float>& h = c.h;
  const std::vector<float>& grad = c.grad;
  for (const bool vanilla_faster : {true, false}) {
    AdaptivePolicy policy = c.policy();
    for (int epoch = 1; epoch <= 10; ++epoch) {
      const bool slow = vanilla_faster ? epoch == 4 || epoch == 5 : epoch == 7 || epoch == 8;
      const double extra_s = epoch == 2 ? 0.6 : slow ? 0.3 : 0.0;
      const PlannedEpoch e = run_epoch(policy, graph, epoch, h, grad, extra_s);
      const bool trial = epoch >= 6 && epoch <= 8;
      const bool vanilla = trial || (vanilla_faster && epoch > 8);
      const std::string what = std::string(vanilla_faster ? "Vanilla faster" : "Vanilla slower") +
                               ", epoch " + std::to_string(epoch);
      EXPECT_EQ(e.plan.overlap, !vanilla) << what;
      EXPECT_EQ(e.stats.vanilla_schedule, vanilla) << what;
      EXPECT_EQ(e.plan.forward[kLayer].full_precision, epoch > 2) << what;
      EXPECT_EQ(e.plan.backward[kLayer].full_precision, epoch > 2) << what;
      EXPECT_FALSE(e.stats.full_precision_given_up) << what;
      QuantPlan plan = e.plan;
      graph.set_quant_plan(&plan);
      EXPECT_EQ(graph.overlaps(), !vanilla) << what;
      graph.set_quant_plan(nullptr);
      EXPECT_TRUE(graph.overlaps()) << what << ": the graph's own schedule outside the plan";
    }
  }
}

// A kept Vanilla's schedule is tried against the scheme kTrialGap (16) epochs later: epochs 1-8 as
// above (Vanilla faster: kept from 9), Vanilla's epochs 21-24 slow, the scheme's trial in 25-27 (25
// cold) on its plans from before (overlapped, at full precision): faster, so it runs from 28 on.
TEST(AdaptiveSeconds, AKeptVanillaScheduleGivesWayWhereTheSchemeIsFasterAgain) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const FastLink c(*comm, /*overlap=*/true);
  DistGraph& graph = *c.graph;
  AdaptivePolicy policy = c.policy();
  for (int epoch = 1; epoch <= 30; ++epoch) {
    const bool slow = epoch == 4 || epoch == 5 || (epoch >= 21 && epoch <= 24);
    const double extra_s = epoch == 2 ? 0.6 : slow ? 0.3 : 0.0;
    const PlannedEpoch e = run_epoch(policy, graph, epoch, c.h, c.grad, extra_s);
    const bool vanilla = epoch >= 6 && epoch <= 24;
    const std::string what = "epoch " + std::to_string(epoch);
    EXPECT_EQ(e.plan.overlap, !vanilla) << what;
    EXPECT_EQ(e.stats.vanilla_schedule, vanilla) << what;
    EXPECT_EQ(e.plan.forward[kLayer].full_precision, epoch > 2) << what;
    EXPECT_EQ(e.plan.backward[kLayer].full_precision, epoch > 2) << what;
    EXPECT_FALSE(e.stats.full_precision_given_up) << what;
  }
}

// A trial that Vanilla's schedule lost runs again kTrialGap (16) epochs later, and decides on the
// medians of the latest epochs of each schedule: epochs 1-8 as above with the trial's epochs 7-8
// slow (lost), the adaptive scheme's epochs 9-24, the second trial in 25-27 (25 cold). Where the
// scheme's latest epochs (21-24) are slow and the second trial's fast, the trial epochs' median
// (two slow, two fast) beats the scheme's and Vanilla's schedule is kept from epoch 28; where the
// second trial is slow again, the scheme stays, its next trial 32 epochs away.
TEST(AdaptiveSeconds, LostTrialRunsAgainAndTheLatestEpochsDecide) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const FastLink c(*comm, /*overlap=*/true);
  DistGraph& graph = *c.graph;
  const std::vector<float>& h = c.h;
  const std::vector<float>& grad = c.grad;
  for (const bool second_faster : {true, false}) {
    AdaptivePolicy policy = c.policy();
    for (int epoch = 1; epoch <= 30; ++epoch) {
      const bool slow = epoch == 2 || epoch == 7 || epoch == 8 ||
                        (second_faster ? epoch >= 21 && epoch <= 24 : epoch == 26 || epoch == 27);
      const PlannedEpoch e = run_epoch(policy, graph, epoch, h, grad, slow ? 0.3 : 0.0);
      const bool trial = (epoch >= 6 && epoch <= 8) || (epoch >= 25 && epoch <= 27);
      const bool vanilla = trial || (second_faster && epoch >= 28);
      const std::string what = std::string(second_faster ? "second trial faster" : "slower") +
                               ", epoch " + std::to_string(epoch);
      EXPECT_EQ(e.plan.overlap, !vanilla) << what;
      EXPECT_EQ(e.stats.vanilla_schedule, vanilla) << what;
      EXPECT_EQ(e.plan.forward[kLayer].full_precision, epoch > 2) << what;
      EXPECT_FALSE(e.stats.full_precision_given_up) << what;
    }
  }
}

// The scheme's trials against a kept Vanilla's schedule run the scheme's latest plans. On a slow
// link (in the model) whose transfers hide behind the epoch's work (epochs 2-4 sleep inside the
// exchanges' windows), the model puts both exchanges at full precision (3-5); Vanilla's schedule is
// tried (6-8) and kept against the slow epochs 4-5. The scheme's first trial (25-27) finds nothing
// hidden any more and quantizes both exchanges; its epochs 26-27 slow, it loses. Its second trial
// (60-62, Vanilla's 56-59 slow) must run those quantized plans and widths, kept from then on: the
// choices from before Vanilla's schedule was first kept (full precision) came back without a
// refresh age or a solve's inputs, and no refresh or solve ever took the exchanges up again.
TEST(AdaptiveSeconds, ASchemeTrialRunsTheSchemesLatestPlans) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::small_graph(240, 36);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm, /*overlap=*/true);
  DistGraph& graph = *owned;
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  // 10 us a byte: full precision's 24 bytes a row take twice as long as 8 bits' 14 wherever
  // nothing hides them.
  const std::vector<assign::LinkCost> slow(comm->size(), {1e-4, 1e-5});
  AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                        assign::per_sender_time_model(slow), /*layers=*/2, AdaptiveOptions{},
                        /*seed=*/5, /*measured_times=*/true);
  const auto sleep_s = [](double s) {
    if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
  };
  std::vector<uint8_t> lost_trial_send[2];
  std::array<double, 2> vanilla_predicted{};  // forward, backward: Vanilla's first epoch's
  for (int epoch = 1; epoch <= 64; ++epoch) {
    const double hidden_s = epoch == 2 ? 0.3 : epoch == 3 || epoch == 4 ? 0.15 : 0.0;
    const bool slow_epoch =
        epoch == 5 || epoch == 26 || epoch == 27 || (epoch >= 56 && epoch <= 59);
    QuantPlan plan = policy.plan(epoch, graph.message_traces());
    sleep_s(slow_epoch ? 0.3 : 0.0);
    std::vector<float> y(h.size()), dh(grad.size());
    graph.set_quant_plan(&plan);
    graph.reset_comm_stats();
    graph.begin_aggregate(h.data(), kWidth, kLayer);
    sleep_s(hidden_s);
    graph.aggregate_local(h.data(), kWidth, y.data());
    graph.end_aggregate(kWidth, y.data());
    graph.begin_aggregate_backward(grad.data(), kWidth, kLayer);
    sleep_s(hidden_s);
    graph.end_aggregate_backward(grad.data(), kWidth, dh.data());
    graph.set_quant_plan(nullptr);
    const AssignStats stats = *policy.finish_epoch(graph.comm_stats(), graph.message_traces());
    const std::string what = "epoch " + std::to_string(epoch);
    const bool vanilla = (epoch >= 6 && epoch <= 24) || (epoch >= 28 && epoch <= 59);
    ASSERT_EQ(plan.overlap, !vanilla) << what;
    ASSERT_EQ(stats.vanilla_schedule, vanilla) << what;
    EXPECT_FALSE(stats.full_precision_given_up) << what;
    const bool full = (epoch >= 3 && epoch <= 24) || (epoch >= 28 && epoch <= 59);
    for (int d = 0; d < 2; ++d) {
      // Every epoch of Vanilla's schedule predicts Vanilla's exchanges, also those after the
      // scheme's lost trial (it reported the trial's quantized prediction).
      const double predicted =
          (d == 0 ? stats.predicted_forward_s : stats.predicted_backward_s)[kLayer];
      if (epoch == 6) vanilla_predicted[d] = predicted;
      if (vanilla) {
        EXPECT_DOUBLE_EQ(predicted, vanilla_predicted[d]) << what;
      }
      const MessageBits& mb = (d == 0 ? plan.forward : plan.backward)[kLayer];
      EXPECT_EQ(mb.full_precision, full) << what << (d == 0 ? " forward" : " backward");
      if (epoch == 27) lost_trial_send[d] = mb.send;
      if (epoch >= 60) {
        EXPECT_EQ(mb.send, lost_trial_send[d]) << what << ": the lost trial's widths";
      }
    }
  }
  EXPECT_TRUE(std::any_of(lost_trial_send[0].begin(), lost_trial_send[0].end(),
                          [](uint8_t b) { return b < quant::all_widths().back(); }) ||
              lost_trial_send[0].empty())
      << "the lost trial solved narrower widths than the largest";
}

// On a slow link without codec time in the model, full precision (24 bytes a row here against
// 14 at 8 bits) never pays: objective seconds plans exactly the normalised objective's widths,
// with the fast solver and with the exact MILP. (A rank alone sends nothing: full precision.)
class SlowLink : public ::testing::TestWithParam<assign::Solver> {};

TEST_P(SlowLink, ObjectiveSecondsPlansTheNormalizedWidths) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 37);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  std::vector<std::unique_ptr<AdaptivePolicy>> policies;
  for (assign::Objective objective :
       {assign::Objective::kSeconds, assign::Objective::kNormalized}) {
    AdaptiveOptions aopt;
    aopt.solver = GetParam();
    aopt.objective = objective;
    policies.push_back(std::make_unique<AdaptivePolicy>(
        graph.boundary(), graph.a_halo(), *comm,
        assign::per_sender_time_model(link_costs(comm->size())), /*layers=*/2, aopt, /*seed=*/5,
        /*measured_times=*/false));
  }
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  policies[1]->plan(1, graph.message_traces());
  run_epoch(*policies[0], graph, 1, h, grad);  // traces the rows (8 bits, the same for both)
  const QuantPlan seconds = policies[0]->plan(2, graph.message_traces());
  const QuantPlan normalized = policies[1]->plan(2, graph.message_traces());
  for (const auto& [what, a, b] :
       {std::tuple{"forward", &seconds.forward, &normalized.forward},
        std::tuple{"backward", &seconds.backward, &normalized.backward}}) {
    EXPECT_EQ((*a)[kLayer].full_precision, comm->size() == 1) << what;
    if (comm->size() == 1) continue;
    EXPECT_EQ((*a)[kLayer].send, (*b)[kLayer].send) << what << " widths sent";
    EXPECT_EQ((*a)[kLayer].recv, (*b)[kLayer].recv) << what << " widths received";
  }
  if (comm->size() > 1) {
    EXPECT_GE(distinct_widths(widths_seen(*comm, graph.boundary(), seconds, true)), 2u)
        << "the solver gave every message the same width";
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, SlowLink,
                         ::testing::Values(assign::Solver::kFast, assign::Solver::kExact),
                         solver_name);

// Rank 0's referee problem over every rank's messages, `all` holding (sender, receiver, weight,
// width a, width b) per message as gather_all concatenates them, and the two widths in that order.
struct RefereeInput {
  assign::AssignProblem problem;
  std::vector<uint8_t> a, b;
};

RefereeInput referee_input(const std::vector<double>& all,
                           const std::vector<assign::LinkCost>& costs) {
  RefereeInput in;
  in.problem.row_width = kWidth;
  in.problem.time = assign::per_sender_time_model(costs);
  for (size_t i = 0; i < all.size(); i += 5) {
    in.problem.messages.push_back(
        {static_cast<int32_t>(all[i]), static_cast<int32_t>(all[i + 1]), all[i + 2]});
    in.a.push_back(static_cast<uint8_t>(all[i + 3]));
    in.b.push_back(static_cast<uint8_t>(all[i + 4]));
  }
  return in;
}

// The policy's distributed solve against a referee built here from the graph alone. Every message's
// weight comes from the whole graph's dense normalised adjacency (docs/design.md, section 6:
// forward (sum over the receiver's rows i of a_iv^2) d range^2 / 6, backward d range^2 / 6), each
// range from the row or partial gradient computed here in double; all ranks' messages make one
// problem, which GLPK solves. The policy's own exact solve must reach that optimum: a weight
// without its coefficients would move its widths off it. The fast solve takes the best of 257
// budgets evenly over [tmin, tmax], each sender filling its own greedy prefix: a larger budget
// never raises a prefix's variance, so the grid point above the exact sweep's best budget
// (BudgetSolver::best_budget, serial, within 0.5% of the MILP) costs at most one grid step of time
// more: (1 - lambda) / 256 of the objective (on these graphs the grid's solutions came 0 to 6% of
// the objective above the sweep's).
TEST(AdaptiveReferee, PolicyWidthsAreOptimalForWeightsFromTheDenseAdjacency) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const int world = comm->size();
  const Graph g = test::small_graph(240, 43);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const Boundary& part = graph.boundary();
  PartitionOptions popt;
  popt.parts = world;
  const std::vector<int32_t> owner = assign_parts(g, popt);
  const at::Tensor a = test::dense_adjacency(g, ModelType::kGcn);
  const auto acc = a.accessor<double, 2>();
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  // The range of the row this rank sends for node v: forward v's own row, backward its partial
  // gradient sum over this rank's rows i of a_iv dY_i.
  const auto range_of = [&](Direction dir, int64_t v) {
    std::vector<double> row(kWidth, 0.0);
    if (dir == Direction::kForward) {
      const std::vector<float> r = row_of(v, 0);
      row.assign(r.begin(), r.end());
    } else {
      for (int64_t i = 0; i < g.num_nodes; ++i) {
        if (owner[i] != comm->rank() || acc[i][v] == 0) continue;
        const std::vector<float> dy = row_of(i, 3);
        for (int64_t c = 0; c < kWidth; ++c) row[c] += acc[i][v] * dy[c];
      }
    }
    const auto [lo, hi] = std::minmax_element(row.begin(), row.end());
    return *hi - *lo;
  };
  const std::vector<assign::LinkCost> costs = link_costs(world);
  for (double lambda : {0.25, 0.5, 0.75}) {
    std::vector<std::unique_ptr<AdaptivePolicy>> policies;
    for (assign::Solver solver : {assign::Solver::kFast, assign::Solver::kExact}) {
      AdaptiveOptions aopt;
      aopt.solver = solver;
      aopt.lambda = lambda;
      aopt.objective = assign::Objective::kNormalized;
      policies.push_back(std::make_unique<AdaptivePolicy>(
          graph.boundary(), graph.a_halo(), *comm, assign::per_sender_time_model(costs),
          /*layers=*/2, aopt, /*seed=*/5, /*measured_times=*/false));
    }
    policies[1]->plan(1, graph.message_traces());
    run_epoch(*policies[0], graph, 1, h, grad);  // traces the rows at 8 bits
    const QuantPlan fast = policies[0]->plan(2, graph.message_traces());
    const QuantPlan exact = policies[1]->plan(2, graph.message_traces());
    for (Direction dir : {Direction::kForward, Direction::kBackward}) {
      const std::string what =
          std::string(direction_name(dir)) + ", lambda " + std::to_string(lambda);
      const bool fwd = dir == Direction::kForward;
      const MessageTrace* trace = graph.message_traces().find(kLayer, dir);
      ASSERT_NE(trace, nullptr) << what;
      // sender, receiver, weight, fast width, exact width: one message after another.
      std::vector<double> mine;
      const std::vector<int64_t>& keys = send_keys(part, dir);
      const std::vector<int64_t>& offsets = send_offsets(part, dir);
      for (int r = 0; r < world; ++r) {
        for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
          const int64_t v = keys[k];
          const double range = range_of(dir, v);
          EXPECT_NEAR(trace->ranges[k], range, 1e-5 * range + 1e-7) << what << ", node " << v;
          double coeff_sq = 1;
          if (fwd) {
            coeff_sq = 0;
            for (int64_t i = 0; i < g.num_nodes; ++i) {
              if (owner[i] == r) coeff_sq += acc[i][v] * acc[i][v];
            }
          }
          const MessageBits& f = (fwd ? fast.forward : fast.backward)[kLayer];
          const MessageBits& e = (fwd ? exact.forward : exact.backward)[kLayer];
          mine.insert(mine.end(), {static_cast<double>(comm->rank()), static_cast<double>(r),
                                   coeff_sq * kWidth * range * range / 6,
                                   static_cast<double>(f.send[k]), static_cast<double>(e.send[k])});
        }
      }
      const std::vector<double> all = gather_all(*comm, mine);
      if (comm->rank() != 0) continue;  // one referee
      const auto& [problem, fast_bits, exact_bits] = referee_input(all, costs);
      assign::AssignOptions referee;
      referee.solver = assign::Solver::kExact;
      referee.lambda = lambda;
      const assign::Assignment best = assign::solve_assignment(problem, referee);
      EXPECT_TRUE(best.proven_optimal) << what;
      const double optimum = best.eval.objective;
      const double of_fast = assign::evaluate(problem, fast_bits, lambda).objective;
      const double of_exact = assign::evaluate(problem, exact_bits, lambda).objective;
      assign::AssignOptions serial = referee;
      serial.solver = assign::Solver::kFast;
      const double swept = assign::solve_assignment(problem, serial).eval.objective;
      EXPECT_GT(optimum, 0.0) << what << ": nothing to trade";
      EXPECT_NEAR(of_exact, optimum, 1e-6 * optimum) << what << ": the policy's exact solve";
      EXPECT_LE(swept, optimum * 1.005) << what << ": the serial sweep";
      EXPECT_LE(of_fast, swept + (1 - lambda) / 256 * (1 + 1e-9))
          << what << ": the policy's fast solve (" << problem.messages.size()
          << " messages, MILP optimum " << optimum << ", serial sweep " << swept << ")";
    }
  }
}

// Quantized messages of the cover layout (source rows and partial sums): every owned row of
// y = A h is off by at most one step of each received message's width, weighted by its entry in
// A'_halo (a_ij for a source row, 1 for a partial sum), each step from the range its sender traced.
TEST(CoverLayout, QuantizedMessagesStayWithinTheirWidthsBound) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::directed_graph(240, 43);
  DistGraphOptions gopt;
  gopt.norm = &conv_norm(ModelType::kGcn);
  gopt.exchange = ExchangeLayout::kCover;
  DistGraph graph(test::my_part(g, *comm), *comm, gopt);
  const Part& part = graph.part();
  const Boundary& b = graph.boundary();
  const std::vector<float> h = owned_rows(part, 0);
  for (int bits : {2, 8}) {
    SchemeOptions so;
    so.bits = bits;
    QuantPlan plan = scheme_plan(b, 2, so, 1);
    plan.trace_ranges = true;
    std::vector<float> y(h.size()), exact(h.size());
    graph.set_quant_plan(&plan);
    graph.aggregate(h.data(), kWidth, y.data(), kLayer);
    graph.settle();  // its traces taken; the next exchange is another epoch's
    graph.set_quant_plan(nullptr);
    graph.aggregate(h.data(), kWidth, exact.data(), kLayer);
    graph.settle();
    // Each received message's range, from its sender's trace (send order to receive order).
    const MessageTrace* trace = graph.message_traces().find(kLayer, Direction::kForward);
    ASSERT_NE(trace, nullptr);
    ASSERT_EQ(static_cast<int64_t>(trace->ranges.size()), b.sends());
    std::vector<float> ranges(static_cast<size_t>(b.recvs()), 0.0F);
    ExchangeBuffers buffers = ExchangeBuffers::none(comm->size());
    for (int r = 0; r < comm->size(); ++r) {
      if (r == comm->rank()) continue;
      buffers.send[r] = trace->ranges.data() + b.send_offsets[r];
      buffers.send_bytes[r] = static_cast<size_t>(b.send_count_to(r)) * sizeof(float);
      buffers.recv[r] = ranges.data() + b.recv_offsets[r];
      buffers.recv_bytes[r] = static_cast<size_t>(b.recv_count_from(r)) * sizeof(float);
    }
    comm->exchange(buffers, ExchangeOptions(9))->wait();
    const kernels::CsrView& a = graph.a_halo();
    ASSERT_EQ(a.cols, b.recvs());
    double worst = 0;
    for (int64_t i = 0; i < a.rows; ++i) {
      double bound = 1e-4;  // float rounding of the sums
      for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
        bound += std::abs(a.values[k]) * ranges[a.indices[k]] / ((1 << bits) - 1) * (1 + 1e-5);
      }
      for (int64_t c = 0; c < kWidth; ++c) {
        const double err = std::abs(y[i * kWidth + c] - exact[i * kWidth + c]);
        worst = std::max(worst, err);
        ASSERT_LE(err, bound) << bits << " bits, owned row " << i << " (node " << part.owned_gid[i]
                              << "), element " << c;
      }
    }
    // The quantization is visible (no message left exact by mistake).
    double most = worst;
    comm->allreduce_max(&most, 1);
    EXPECT_GT(most, 1e-4) << bits << " bits";
  }
}

// The same referee for the cover layout (communication.exchange: cover), where a sent row is a
// source row h_j or a partial sum m_i = sum_j a_ij h_j over the sender's cut edges into i that no
// source row carries (boundary.h: keys of partial rows are N (1 + sender) + i). Built here from
// the dense adjacency and the boundary's keys alone: forward, a source row's coefficient is the sum
// of a_ij^2 over its receiver's rows i, a partial row's 1; backward (the receiver returns
// g'_j = sum_i a_ij g_i for a source row, g_i for a partial one), a source row's coefficient is 1
// and a partial row's the sum of its a_ij^2 (the send matrix's row: the sender spreads the
// returned gradient over its rows j). The policy's exact solve, given the send matrix, must reach
// the optimum; one built without it weighs the partial rows' gradients as plain rows and does not.
TEST(AdaptiveReferee, CoverLayoutWidthsAreOptimalForWeightsFromTheSendMatrix) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const int world = comm->size(), me = comm->rank();
  const Graph g = test::directed_graph(240, 43);
  const int64_t n = g.num_nodes;
  DistGraphOptions gopt;
  gopt.norm = &conv_norm(ModelType::kGcn);
  gopt.exchange = ExchangeLayout::kCover;
  DistGraph graph(test::my_part(g, *comm), *comm, gopt);
  const Boundary& part = graph.boundary();
  ASSERT_NE(graph.send_matrix(), nullptr);
  PartitionOptions popt;
  popt.parts = world;
  const std::vector<int32_t> owner = assign_parts(g, popt);
  const at::Tensor a = test::dense_adjacency(g, ModelType::kGcn);
  const auto acc = a.accessor<double, 2>();
  // Which rows travel as source rows, per (sender, receiver) pair: from the keys of both ends.
  std::set<std::pair<int, int64_t>> my_sources, sources_to_me;  // (peer, j)
  int64_t partial_rows = 0;
  for (int r = 0; r < world; ++r) {
    for (int64_t k = part.send_offsets[r]; k < part.send_offsets[r + 1]; ++k) {
      if (part.send_keys[k] < n) my_sources.insert({r, part.send_keys[k]});
      partial_rows += part.send_keys[k] >= n ? 1 : 0;
    }
    for (int64_t k = part.recv_offsets[r]; k < part.recv_offsets[r + 1]; ++k) {
      if (part.recv_keys[k] < n) sources_to_me.insert({r, part.recv_keys[k]});
    }
  }
  comm->allreduce_sum(&partial_rows, 1);
  ASSERT_GT(partial_rows, 0) << "no partial sums: the cover layout sent only source rows";
  // The cut edges j -> i from `sender` into `receiver`'s node i that no source row carries.
  const auto partial_terms = [&](int sender, int64_t i,
                                 const std::set<std::pair<int, int64_t>>& sources, int receiver) {
    std::vector<int64_t> js;
    for (int64_t j = 0; j < n; ++j) {
      if (owner[j] == sender && acc[i][j] != 0 && sources.count({receiver, j}) == 0) {
        js.push_back(j);
      }
    }
    return js;
  };
  const auto range_of = [](const std::vector<double>& row) {
    const auto [lo, hi] = std::minmax_element(row.begin(), row.end());
    return *hi - *lo;
  };
  // (range, coefficient) of the message with key `key` this rank sends to `peer` in `dir`.
  const auto message = [&](Direction dir, int peer, int64_t key) {
    std::vector<double> row(kWidth, 0.0);
    double coeff_sq = 0;
    const auto add = [&](double c, int64_t node, uint64_t salt) {
      const std::vector<float> x = row_of(node, salt);
      for (int64_t col = 0; col < kWidth; ++col) row[col] += c * x[col];
    };
    if (dir == Direction::kForward && key < n) {  // h_j; its edges into the peer's rows
      add(1, key, 0);
      for (int64_t i = 0; i < n; ++i) {
        if (owner[i] == peer) coeff_sq += acc[i][key] * acc[i][key];
      }
    } else if (dir == Direction::kForward) {  // m_i, added with coefficient 1
      const int64_t i = key - n * (1 + me);
      for (int64_t j : partial_terms(me, i, my_sources, peer)) add(acc[i][j], j, 0);
      coeff_sq = 1;
    } else if (key < n) {  // sum_i a_ij g_i over this rank's rows; the sender adds it to dh_j
      for (int64_t i = 0; i < n; ++i) {
        if (owner[i] == me && acc[i][key] != 0) add(acc[i][key], i, 3);
      }
      coeff_sq = 1;
    } else {  // g_i, spread by the sender over its rows j with a_ij
      const int64_t i = key - n * (1 + peer);
      add(1, i, 3);
      for (int64_t j : partial_terms(peer, i, sources_to_me, peer))
        coeff_sq += acc[i][j] * acc[i][j];
    }
    return std::pair{range_of(row), coeff_sq};
  };
  const std::vector<assign::LinkCost> costs = link_costs(world);
  std::vector<std::unique_ptr<AdaptivePolicy>> policies;
  for (const kernels::CsrView* s :
       {graph.send_matrix(), static_cast<const kernels::CsrView*>(nullptr)}) {
    AdaptiveOptions aopt;
    aopt.solver = assign::Solver::kExact;
    aopt.objective = assign::Objective::kNormalized;
    policies.push_back(std::make_unique<AdaptivePolicy>(
        graph.boundary(), graph.a_halo(), *comm, assign::per_sender_time_model(costs),
        /*layers=*/2, aopt, /*seed=*/5, /*measured_times=*/false, s));
  }
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  policies[1]->plan(1, graph.message_traces());
  run_epoch(*policies[0], graph, 1, h, grad);  // traces the rows at 8 bits
  const QuantPlan with_s = policies[0]->plan(2, graph.message_traces());
  const QuantPlan without_s = policies[1]->plan(2, graph.message_traces());
  for (Direction dir : {Direction::kForward, Direction::kBackward}) {
    const bool fwd = dir == Direction::kForward;
    const std::string what = direction_name(dir);
    const MessageTrace* trace = graph.message_traces().find(kLayer, dir);
    ASSERT_NE(trace, nullptr) << what;
    // sender, receiver, weight, width with S, width without: one message after another.
    std::vector<double> mine;
    const std::vector<int64_t>& keys = send_keys(part, dir);
    const std::vector<int64_t>& offsets = send_offsets(part, dir);
    for (int r = 0; r < world; ++r) {
      for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
        const auto [range, coeff_sq] = message(dir, r, keys[k]);
        EXPECT_NEAR(trace->ranges[k], range, 1e-5 * range + 1e-7) << what << ", key " << keys[k];
        const MessageBits& s = (fwd ? with_s.forward : with_s.backward)[kLayer];
        const MessageBits& o = (fwd ? without_s.forward : without_s.backward)[kLayer];
        mine.insert(mine.end(), {static_cast<double>(me), static_cast<double>(r),
                                 coeff_sq * kWidth * range * range / 6,
                                 static_cast<double>(s.send[k]), static_cast<double>(o.send[k])});
      }
    }
    const std::vector<double> all = gather_all(*comm, mine);
    if (me != 0) continue;  // one referee
    const auto& [problem, s_bits, plain_bits] = referee_input(all, costs);
    assign::AssignOptions referee;
    referee.solver = assign::Solver::kExact;
    referee.lambda = 0.5;
    const assign::Assignment best = assign::solve_assignment(problem, referee);
    EXPECT_TRUE(best.proven_optimal) << what;
    const double optimum = best.eval.objective;
    EXPECT_NEAR(assign::evaluate(problem, s_bits, 0.5).objective, optimum, 1e-6 * optimum) << what;
    if (!fwd) {
      EXPECT_GT(assign::evaluate(problem, plain_bits, 0.5).objective, optimum * (1 + 1e-6))
          << "backward: the partial rows' coefficients changed no width";
    }
  }
}

// Links of two speeds (ranks 0 and 1 share a host, the others share another): messages between
// ranks of one host cross a channel a million times faster than the slow links between hosts. With
// objective seconds, every message of weight on a fast link travels at full precision inside the
// quantized exchange, the slow links stay quantized (but for messages of senders with time to
// spare); both ends agree on every width, the wire carries exactly the chosen sizes, and the rows
// that crossed at full precision arrive exactly.
// The host of each rank on two hosts: ranks 0 and 1 on host 0, the others on host 1.
std::vector<int> two_hosts(int world) {
  std::vector<int> host_of(world);
  for (int r = 0; r < world; ++r) host_of[r] = r < 2 ? 0 : 1;
  return host_of;
}

class TwoSpeedLinks : public ::testing::TestWithParam<assign::Solver> {};

TEST_P(TwoSpeedLinks, SameHostMessagesTravelAtFullPrecision) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 3);
  const Graph g = test::small_graph(240, 38);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const int world = comm->size();
  const std::vector<int> host_of = two_hosts(world);
  const std::vector<assign::LinkCost> slow = link_costs(world);
  std::vector<assign::LinkCost> costs(assign::kLinkClasses * world);
  for (int r = 0; r < world; ++r) {
    costs[assign::kLinkClasses * r + assign::kSameHost] = {0.0, slow[r].beta * 1e-6};
    costs[assign::kLinkClasses * r + assign::kOtherHost] = slow[r];
  }
  AdaptiveOptions aopt;
  aopt.solver = GetParam();
  AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                        assign::per_sender_class_time_model(host_of, costs), /*layers=*/2, aopt,
                        /*seed=*/5, /*measured_times=*/false);
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  run_epoch(policy, graph, 1, h, grad);  // traces the rows at 8 bits
  const PlannedEpoch e = run_epoch(policy, graph, 2, h, grad);
  EXPECT_TRUE(e.stats.solved);
  const Boundary& part = graph.boundary();
  int64_t same_host = 0, other_host = 0, other_full = 0;
  for (Direction dir : {Direction::kForward, Direction::kBackward}) {
    const MessageBits& mb = (dir == Direction::kForward ? e.plan.forward : e.plan.backward)[kLayer];
    ASSERT_FALSE(mb.full_precision) << direction_name(dir);
    const std::vector<int64_t>& out = send_offsets(part, dir);
    for (int r = 0; r < world; ++r) {
      for (int64_t k = out[r]; k < out[r + 1]; ++k) {
        if (host_of[r] == host_of[part.rank]) {
          ++same_host;
          EXPECT_EQ(mb.send[k], quant::kFullPrecisionBits) << direction_name(dir) << " to " << r;
        } else {
          ++other_host;
          other_full += mb.send[k] == quant::kFullPrecisionBits ? 1 : 0;
        }
      }
    }
  }
  int64_t counts[3] = {same_host, other_host, other_full};
  const int64_t full_here = same_host + other_full;
  comm->allreduce_sum(counts, 3);
  EXPECT_GT(counts[0], 0) << "no message between ranks of one host";
  EXPECT_GT(counts[1], 0) << "no message between hosts";
  // Senders with time to spare before the slowest one may send some at full precision too.
  EXPECT_LT(counts[2], counts[1]) << "the slow links went unquantized";
  const auto sent = widths_seen(*comm, part, e.plan, true);
  EXPECT_EQ(sent, widths_seen(*comm, part, e.plan, false));
  EXPECT_EQ(e.comm.bytes_forward[kLayer], wire_bytes(e.plan.forward[kLayer].send));
  EXPECT_EQ(e.comm.bytes_backward[kLayer], wire_bytes(e.plan.backward[kLayer].send));
  EXPECT_EQ(e.stats.hist_forward[kLayer][quant::kNumWidths] +
                e.stats.hist_backward[kLayer][quant::kNumWidths],
            full_here);

  // Halo rows from a rank of this host arrive exactly (full precision), under the epoch's plan.
  std::vector<float> y(h.size()), exact(h.size());
  QuantPlan plan = e.plan;
  graph.set_quant_plan(&plan);
  graph.aggregate(h.data(), kWidth, y.data(), kLayer);
  graph.set_quant_plan(nullptr);
  graph.aggregate(h.data(), kWidth, exact.data(), kLayer);
  const kernels::CsrView& a = graph.a_halo();
  const Part& p = graph.part();
  for (int64_t i = 0; i < a.rows; ++i) {
    bool only_same_host = true;
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      only_same_host =
          only_same_host && plan.forward[kLayer].recv[a.indices[k]] == quant::kFullPrecisionBits;
    }
    if (!only_same_host) continue;
    for (int64_t c = 0; c < kWidth; ++c) {
      ASSERT_EQ(y[i * kWidth + c], exact[i * kWidth + c])
          << "owned row " << i << " (node " << p.owned_gid[i] << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Solvers, TwoSpeedLinks,
                         ::testing::Values(assign::Solver::kFast, assign::Solver::kExact),
                         solver_name);

// Full precision given up (the measured check, as in FullPrecisionMeasuredSlowerIsGivenUp) also
// ends the single messages at full precision inside a quantized exchange. Links of two speeds as
// in TwoSpeedLinks, measured times: layer 0's rows of one value are smaller at full precision than
// at any width, so its exchanges travel whole at full precision (epochs 3-5, 4 and 5 made slow:
// given up at 5); layer 1's wide rows are quantized, its same-host messages at full precision.
// From the epoch after the give-up on, layer 1 is solved again without that option: no message
// travels at full precision, though its ranges have not moved (resolve_drift alone would keep the
// old widths).
TEST(TwoSpeedLinksGivenUp, NoSingleMessageStaysAtFullPrecision) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 3);
  const Graph g = test::small_graph(240, 38);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const int world = comm->size();
  const std::vector<int> host_of = two_hosts(world);
  // Between hosts 10-40 us a byte: quantizing saves far more than any codec time measured on a
  // loaded machine (at link_costs' 10-40 ns, layer 1 went whole to full precision under ctest).
  std::vector<assign::LinkCost> costs(assign::kLinkClasses * world);
  for (int r = 0; r < world; ++r) {
    costs[assign::kLinkClasses * r + assign::kSameHost] = {0.0, 1e-11};
    costs[assign::kLinkClasses * r + assign::kOtherHost] = {1e-4, 1e-5 * (1 + r)};
  }
  AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                        assign::per_sender_class_time_model(host_of, costs), /*layers=*/2,
                        AdaptiveOptions{}, /*seed=*/5, /*measured_times=*/true);
  const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  std::vector<float> h1, grad1;  // layer 0: one value a row
  for (size_t i = 0; i < h.size(); i += kWidth) {
    h1.push_back(h[i]);
    grad1.push_back(grad[i]);
  }
  const auto full_messages = [](const MessageBits& mb) {
    return std::count(mb.send.begin(), mb.send.end(), quant::kFullPrecisionBits);
  };
  for (int epoch = 1; epoch <= 7; ++epoch) {
    const QuantPlan plan = policy.plan(epoch, graph.message_traces());
    if (epoch == 4 || epoch == 5) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<float> y(h.size()), dh(h.size()), y1(h1.size()), dh1(h1.size());
    graph.set_quant_plan(&plan);
    graph.aggregate(h1.data(), 1, y1.data(), 0);
    graph.aggregate(h.data(), kWidth, y.data(), kLayer);
    graph.aggregate_backward(grad.data(), kWidth, dh.data(), kLayer);
    graph.aggregate_backward(grad1.data(), 1, dh1.data(), 0);
    graph.set_quant_plan(nullptr);
    const AssignStats stats = *policy.finish_epoch(graph.comm_stats(), graph.message_traces());
    const std::string what = "epoch " + std::to_string(epoch);
    EXPECT_EQ(stats.full_precision_given_up, epoch >= 5) << what;
    EXPECT_EQ(plan.forward[0].full_precision, epoch >= 3 && epoch <= 5) << what;
    const MessageBits& fwd = plan.forward[kLayer];
    const MessageBits& bwd = plan.backward[kLayer];
    ASSERT_FALSE(fwd.full_precision || bwd.full_precision) << what;
    int64_t full[2] = {full_messages(fwd) + full_messages(bwd), 0};
    comm->allreduce_sum(full, 2);
    if (epoch >= 3 && epoch <= 5) {
      EXPECT_GT(full[0], 0) << what << ": no same-host message";
    } else if (epoch >= 6) {
      EXPECT_EQ(full[0], 0) << what << ": full precision outlived its give-up";
    }
    EXPECT_EQ(widths_seen(*comm, graph.boundary(), plan, true),
              widths_seen(*comm, graph.boundary(), plan, false))
        << what;
  }
}

// resolve_drift: a due solve of an exchange whose ranges have not moved is skipped and its widths
// kept; rows four times as wide (sixteen times the squared ranges, exactly) trigger it, and give
// the first solve's widths again: the solve normalises the variances (a common scale is not what
// moves the widths; docs/design.md, section 6, re-solving). Skipped or not, the widths every
// receiver decodes with are the ones its senders use.
TEST(AdaptiveDrift, UnchangedRangesSkipTheSolveAndBothEndsStillAgree) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 38);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  AdaptiveOptions aopt;
  aopt.resolve_drift = 0.5;
  aopt.objective = assign::Objective::kNormalized;  // also alone (W = 1: no messages)
  AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                        assign::per_sender_time_model(link_costs(comm->size())), /*layers=*/2, aopt,
                        /*seed=*/5, /*measured_times=*/false);
  std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
  QuantPlan solved;
  for (int epoch = 1; epoch <= 5; ++epoch) {
    if (epoch == 4) {
      for (float& x : h) x *= 4;
      for (float& x : grad) x *= 4;
    }
    const PlannedEpoch e = run_epoch(policy, graph, epoch, h, grad);
    // Epoch 2 solves the first trace; epoch 5 the first trace of the wider rows (epoch 4's), which
    // a rank alone does not have (no messages, no ranges).
    const bool solves = epoch == 2 || (epoch == 5 && comm->size() > 1);
    EXPECT_EQ(e.stats.solved, solves) << "epoch " << epoch;
    if (epoch == 2) solved = e.plan;
    if (epoch >= 3) {
      EXPECT_EQ(e.plan.forward[kLayer].send, solved.forward[kLayer].send) << "epoch " << epoch;
      EXPECT_EQ(e.plan.backward[kLayer].recv, solved.backward[kLayer].recv) << "epoch " << epoch;
    }
    EXPECT_EQ(widths_seen(*comm, graph.boundary(), e.plan, true),
              widths_seen(*comm, graph.boundary(), e.plan, false))
        << "epoch " << epoch;
  }
}

// Rows that move (the odd nodes' rows four times as wide from epoch 4 on: every rank's squared
// ranges drift past 50%, and unevenly, so the widths move) trigger the solve of epoch 5, from epoch
// 4's traces: its widths are new, and those of a policy beside it that solves every epoch
// (resolve_drift 0) from the same rows, message by message at both ends. A solve that kept the old
// widths, or read older traces, differs. (The drift is each rank's sum of squared ranges: rows that
// only trade places, as a new salt of owned_rows makes them, need not trigger it.)
TEST(AdaptiveDrift, MovedRangesSolveAgainFromTheNewTraces) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const Graph g = test::small_graph(240, 38);
  AdaptiveOptions aopt;
  aopt.objective = assign::Objective::kNormalized;
  const assign::TimeModel time = assign::per_sender_time_model(link_costs(comm->size()));
  const std::unique_ptr<DistGraph> graph = gcn_graph(g, *comm), every_graph = gcn_graph(g, *comm);
  aopt.resolve_drift = 0.5;
  AdaptivePolicy policy(graph->boundary(), graph->a_halo(), *comm, time, /*layers=*/2, aopt,
                        /*seed=*/5, /*measured_times=*/false);
  aopt.resolve_drift = 0;
  AdaptivePolicy every(every_graph->boundary(), every_graph->a_halo(), *comm, time, /*layers=*/2,
                       aopt, /*seed=*/5, /*measured_times=*/false);
  const Part& part = graph->part();
  const std::vector<float> h = owned_rows(part, 0), grad = owned_rows(part, 3);
  std::vector<float> moved_h = h, moved_grad = grad;
  for (size_t i = 0; i < part.owned_gid.size(); ++i) {
    if (part.owned_gid[i] % 2 == 0) continue;
    for (int64_t c = 0; c < kWidth; ++c) {
      moved_h[i * kWidth + c] *= 4;
      moved_grad[i * kWidth + c] *= 4;
    }
  }
  const auto widths = [&](const QuantPlan& plan, bool sending) {
    return widths_seen(*comm, graph->boundary(), plan, sending);
  };
  QuantPlan first;
  for (int epoch = 1; epoch <= 5; ++epoch) {
    const bool moved = epoch >= 4;
    const std::vector<float>& x = moved ? moved_h : h;
    const std::vector<float>& dy = moved ? moved_grad : grad;
    const PlannedEpoch e = run_epoch(policy, *graph, epoch, x, dy);
    const PlannedEpoch reference = run_epoch(every, *every_graph, epoch, x, dy);
    EXPECT_EQ(e.stats.solved, epoch == 2 || epoch == 5) << "epoch " << epoch;
    if (epoch == 2) first = e.plan;
    if (epoch < 2) continue;
    EXPECT_EQ(widths(e.plan, true), widths(reference.plan, true)) << "epoch " << epoch;
    EXPECT_EQ(widths(e.plan, false), widths(e.plan, true)) << "epoch " << epoch;
    if (epoch == 5) {
      EXPECT_NE(widths(e.plan, true), widths(first, true))
          << "the moved rows left every width as it was";
    }
  }
}

// lambda = 1 under objective seconds: variance only, and full precision has none: every epoch
// after the first sends what the overlap mode sends, with no codec time.
TEST(AdaptiveTraining, LambdaOneInSecondsSendsWhatTheOverlapModeSends) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 39);
  const AdaptiveRun adaptive = train_adaptive(g, *comm, options("adaptive", 8, 1.0));
  TrainerOptions overlap_opt = options("uniform", 8, 0.5);
  overlap_opt.mode = CommMode::kOverlap;
  const AdaptiveRun overlap = train_adaptive(g, *comm, overlap_opt);
  for (int e = 1; e < kAdaptiveEpochs; ++e) {
    EXPECT_EQ(adaptive.epochs[e].bytes_forward, overlap.epochs[e].bytes_forward)
        << "epoch " << e + 1;
    EXPECT_EQ(adaptive.epochs[e].bytes_backward, overlap.epochs[e].bytes_backward);
    EXPECT_EQ(adaptive.epochs[e].quant_time_s, 0.0) << "epoch " << e + 1;
    EXPECT_FALSE(adaptive.epochs[e].assign.solved);
  }
}

// Objective seconds, its second test alone: weighed against the solution, full precision wins
// where its time is at most the solution's plus the solution's variance priced at the normalised
// objective's rate, mu = lambda / (1 - lambda) * (tmax - tmin) / (vmax - vmin). Without codec or
// hidden time full precision (24 bytes a row here) is slower than every width (10-14), so the first
// test never takes it; near lambda = 1 the solution sends every message at 8 bits, and full
// precision wins exactly from lambda* = k / (1 + k), k = (t_full - tmax) / ((tmax - tmin) r),
// r = vmin / (vmax - vmin) = (1/255^2) / (1/3^2 - 1/255^2), the times those of the slowest
// sender (per-sender model). Computed here from each sender's message count, per direction:
// 0.1% below lambda* the exchange stays quantized, 0.1% above it goes to full precision.
TEST(AdaptiveSeconds, FullPrecisionWinsAgainstTheSolutionFromTheVariancePrice) {
  const auto comm = test::world_comm();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const int world = comm->size();
  const Graph g = test::small_graph(240, 45);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  const std::vector<assign::LinkCost> costs = link_costs(world);
  // Rows of one scale: no message weighs so little that narrowing it pays near lambda = 1 (the
  // test's other rows span e^8 in range).
  std::vector<float> h, grad;
  for (int64_t gid : graph.part().owned_gid) {
    for (int64_t c = 0; c < kWidth; ++c) {
      h.push_back(static_cast<float>(std::sin(0.7 * gid + 1.3 * c)));
      grad.push_back(static_cast<float>(std::cos(0.3 * gid + 1.1 * c)));
    }
  }
  for (Direction dir : {Direction::kForward, Direction::kBackward}) {
    const int64_t mine = send_offsets(graph.boundary(), dir).back();
    std::vector<int64_t> sends(world);
    comm->allgather(&mine, sends.data(), sizeof(int64_t));
    const auto slowest = [&](int bits) {
      double t = 0;
      for (int s = 0; s < world; ++s) {
        if (sends[s] == 0) continue;
        const auto bytes = static_cast<double>(sends[s] * quant::message_bytes(kWidth, bits));
        t = std::max(t, costs[s].alpha + costs[s].beta * bytes);
      }
      return t;
    };
    const double tmin = slowest(2), tmax = slowest(8), full = slowest(quant::kFullPrecisionBits);
    const double vmin = 1.0 / (255.0 * 255.0), vmax = 1.0 / 9.0;
    const double k = (full - tmax) / ((tmax - tmin) * (vmin / (vmax - vmin)));
    for (const double side : {1 - 1e-3, 1 + 1e-3}) {
      const std::string what =
          std::string(direction_name(dir)) + (side < 1 ? ", below lambda*" : ", above lambda*");
      AdaptiveOptions aopt;
      aopt.lambda = k * side / (1 + k * side);
      AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                            assign::per_sender_time_model(costs), /*layers=*/2, aopt, /*seed=*/5,
                            /*measured_times=*/false);
      run_epoch(policy, graph, 1, h, grad);  // traces the rows at 8 bits
      const PlannedEpoch e = run_epoch(policy, graph, 2, h, grad);
      EXPECT_TRUE(e.stats.solved) << what << ": the first test took full precision";
      const MessageBits& mb =
          (dir == Direction::kForward ? e.plan.forward : e.plan.backward)[kLayer];
      EXPECT_EQ(mb.full_precision, side > 1) << what << " (lambda " << aopt.lambda << ")";
      if (side < 1) {
        EXPECT_TRUE(std::all_of(mb.send.begin(), mb.send.end(), [](uint8_t b) { return b == 8; }))
            << what;
      }
    }
  }
}

// An exchange at full precision is measured afresh every AdaptivePolicy::kRefreshEpochs epochs:
// one epoch at the largest width, traced, so that it is decided again on current ranges and codec
// time; then full precision again. Here lambda = 1 under objective seconds puts every exchange at
// full precision from epoch 2 (no measured times: nothing gives it up), and the rows change after
// epoch 1: the refresh epoch's trace holds the new rows' ranges.
TEST(AdaptiveSeconds, FullPrecisionIsTracedAgainEveryRefreshPeriod) {
  const auto comm = test::world_comm();
  const Graph g = test::small_graph(240, 44);
  const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
  DistGraph& graph = *owned;
  AdaptiveOptions aopt;
  aopt.lambda = 1;
  AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                        assign::per_sender_time_model(link_costs(comm->size())), /*layers=*/2, aopt,
                        /*seed=*/5, /*measured_times=*/false);
  const Part& p = graph.part();
  const std::vector<float> first = owned_rows(p, 0), later = owned_rows(p, 1);
  const std::vector<float> grad = owned_rows(p, 3);
  constexpr int kPeriod = AdaptivePolicy::kRefreshEpochs;
  // At full precision from epoch 2, refreshed at 2 + kPeriod, at full precision again from the
  // epoch after, refreshed kPeriod epochs later.
  const int refresh[2] = {2 + kPeriod, 3 + 2 * kPeriod};
  const Boundary& part = graph.boundary();
  for (int epoch = 1; epoch <= refresh[1] + 1; ++epoch) {
    const PlannedEpoch e = run_epoch(policy, graph, epoch, epoch == 1 ? first : later, grad);
    const bool quantized = epoch == 1 || epoch == refresh[0] || epoch == refresh[1];
    EXPECT_FALSE(e.stats.solved) << "epoch " << epoch;
    for (Direction dir : {Direction::kForward, Direction::kBackward}) {
      const bool fwd = dir == Direction::kForward;
      const MessageBits& mb = (fwd ? e.plan.forward : e.plan.backward)[kLayer];
      const std::string what =
          std::string(direction_name(dir)) + ", epoch " + std::to_string(epoch);
      ASSERT_EQ(mb.full_precision, !quantized) << what;
      if (quantized) {
        EXPECT_TRUE(std::all_of(mb.send.begin(), mb.send.end(), [](uint8_t b) { return b == 8; }))
            << what;
      }
      if (comm->size() == 1) continue;
      const int64_t rows = fwd ? part.sends() : part.recvs();
      const int64_t bytes = (fwd ? e.comm.bytes_forward : e.comm.bytes_backward)[kLayer];
      EXPECT_EQ(bytes, rows * (quantized ? quant::message_bytes(kWidth, 8)
                                         : quant::full_precision_bytes(kWidth)))
          << what;
    }
    if (epoch != refresh[0]) continue;
    const MessageTrace* trace = graph.message_traces().find(kLayer, Direction::kForward);
    ASSERT_NE(trace, nullptr);
    const std::vector<int64_t>& keys = send_keys(part, Direction::kForward);
    ASSERT_EQ(trace->ranges.size(), keys.size());
    for (size_t k = 0; k < keys.size(); ++k) {
      const std::vector<float> row = row_of(keys[k], 1);
      const auto [lo, hi] = std::minmax_element(row.begin(), row.end());
      EXPECT_FLOAT_EQ(trace->ranges[k], *hi - *lo) << "node " << keys[k];
    }
  }
}

// The background solve needs a second communicator for its thread (MPI_THREAD_MULTIPLE).
bool has_solver_thread(Communicator& comm) {
  return comm.host_duplicate() != nullptr;
}

// The background solve: the first solve runs inline (epoch 2, from epoch 1's traces, as the inline
// policy's); later ones are launched by one epoch and adopted by the next, their widths identical
// message by message at both ends to what the inline policy puts into the launching epoch. The
// rows change every epoch (which nodes' ranges are large moves), so every solve has new problems:
// widths adopted late, kept from an earlier solve or solved from the wrong epoch's traces differ.
TEST(AdaptiveBackground, LaterSolvesArriveOneEpochLaterWithTheInlineWidths) {
  const auto comm = test::world_comm();
  if (!has_solver_thread(*comm)) GTEST_SKIP() << "MPI without MPI_THREAD_MULTIPLE";
  const Graph g = test::small_graph(240, 40);
  const std::unique_ptr<DistGraph> inline_graph = gcn_graph(g, *comm);
  const std::unique_ptr<DistGraph> background_graph = gcn_graph(g, *comm);
  AdaptiveOptions aopt;
  aopt.resolve_drift = 0;  // every epoch solves
  aopt.objective = assign::Objective::kNormalized;
  const assign::TimeModel time = assign::per_sender_time_model(link_costs(comm->size()));
  AdaptivePolicy inline_policy(inline_graph->boundary(), inline_graph->a_halo(), *comm, time,
                               /*layers=*/2, aopt, /*seed=*/5, /*measured_times=*/false);
  aopt.background_solve = true;
  AdaptivePolicy background_policy(background_graph->boundary(), background_graph->a_halo(), *comm,
                                   time, /*layers=*/2, aopt, /*seed=*/5, /*measured_times=*/false);
  std::vector<PlannedEpoch> inline_epochs, background_epochs;
  for (int epoch = 1; epoch <= 5; ++epoch) {
    const std::vector<float> h = owned_rows(inline_graph->part(), epoch);
    const std::vector<float> grad = owned_rows(inline_graph->part(), epoch + 3);
    inline_epochs.push_back(run_epoch(inline_policy, *inline_graph, epoch, h, grad));
    background_epochs.push_back(run_epoch(background_policy, *background_graph, epoch, h, grad));
    const PlannedEpoch& b = background_epochs.back();
    // Inline: every epoch from 2 solves. Background: 2 inline, 3 launches, 4 and 5 adopt.
    EXPECT_EQ(inline_epochs.back().stats.solved, epoch >= 2) << "epoch " << epoch;
    EXPECT_EQ(b.stats.solved, epoch == 2 || epoch >= 4) << "epoch " << epoch;
    EXPECT_EQ(b.stats.background_solve_s > 0, epoch >= 4) << "epoch " << epoch;
    EXPECT_EQ(inline_epochs.back().stats.background_solve_s, 0.0);
    EXPECT_EQ(widths_seen(*comm, background_graph->boundary(), b.plan, true),
              widths_seen(*comm, background_graph->boundary(), b.plan, false))
        << "epoch " << epoch << ": a receiver decodes with widths its sender did not use";
    if (epoch < 2) continue;
    // Epoch 2: the same inline solve; later: the inline policy's widths of the epoch before.
    const QuantPlan& was = inline_epochs[epoch == 2 ? 1 : epoch - 2].plan;
    const QuantPlan& now = b.plan;
    EXPECT_EQ(now.forward[kLayer].send, was.forward[kLayer].send) << "epoch " << epoch;
    EXPECT_EQ(now.forward[kLayer].recv, was.forward[kLayer].recv) << "epoch " << epoch;
    EXPECT_EQ(now.backward[kLayer].send, was.backward[kLayer].send) << "epoch " << epoch;
    EXPECT_EQ(now.backward[kLayer].recv, was.backward[kLayer].recv) << "epoch " << epoch;
  }
  if (comm->size() > 1) {
    // The solves differ from epoch to epoch, so the equalities above pin which solve arrived when.
    for (int epoch = 3; epoch <= 5; ++epoch) {
      EXPECT_NE(widths_seen(*comm, inline_graph->boundary(), inline_epochs[epoch - 1].plan, true),
                widths_seen(*comm, inline_graph->boundary(), inline_epochs[epoch - 2].plan, true))
          << "the inline solves of epochs " << epoch - 1 << " and " << epoch << " agree";
    }
    EXPECT_GE(distinct_widths(widths_seen(*comm, background_graph->boundary(),
                                          background_epochs[3].plan, true)),
              2u)
        << "the solver gave every message the same width";
  }
}

// Training with the background solve: identical runs for one seed (losses, bytes, parameters),
// the period kept: due at epochs 2 (inline, the first) and 4 (launched, adopted at 5).
TEST(AdaptiveBackground, SameSeedGivesIdenticalRuns) {
  const auto comm = test::world_comm();
  if (!has_solver_thread(*comm)) GTEST_SKIP() << "MPI without MPI_THREAD_MULTIPLE";
  const Graph g = test::small_graph(240, 41);
  TrainerOptions opt = options("adaptive", 8, 0.5);
  opt.adaptive.background_solve = true;
  opt.adaptive.period = 2;
  opt.adaptive.resolve_drift = 0;
  opt.adaptive.objective = assign::Objective::kNormalized;
  opt.link_costs = link_costs(comm->size());
  Trainer background(test::my_part(g, *comm), *comm, opt);
  Trainer again(test::my_part(g, *comm), *comm, opt);
  for (int e = 1; e <= 6; ++e) {
    const EpochStats a = background.train_epoch(e), b = again.train_epoch(e);
    EXPECT_EQ(a.loss, b.loss) << "epoch " << e;
    EXPECT_EQ(a.bytes_forward, b.bytes_forward) << "epoch " << e;
    EXPECT_EQ(a.bytes_backward, b.bytes_backward) << "epoch " << e;
    EXPECT_EQ(a.assign.solved, e == 2 || e == 5) << "epoch " << e;
    EXPECT_EQ(a.assign.background_solve_s > 0, e == 5) << "epoch " << e;
  }
  EXPECT_EQ(background.parameter_values(), again.parameter_values());
}

// The default objective (seconds) with measured times, beside the epoch: over a slow link (about
// 10 kB/s: quantizing always pays, whatever the measured codec and epoch times, and Vanilla's
// modelled exchanges take seconds, so no trial of Vanilla's schedule, which a loaded machine's
// slow epochs would start over a faster link, takes epochs from the solves) the solves after the
// first run on the policy's thread; over a link so fast that no width saves time every exchange
// goes to full precision without a solve. At every epoch, each receiver decodes with the widths its
// senders use.
TEST(AdaptiveBackground, SecondsWithMeasuredTimesKeepBothEndsAgreeing) {
  const auto comm = test::world_comm();
  if (!has_solver_thread(*comm)) GTEST_SKIP() << "MPI without MPI_THREAD_MULTIPLE";
  const Graph g = test::small_graph(240, 42);
  const std::vector<assign::LinkCost> fast(comm->size(), {0.0, 1e-15});
  std::vector<assign::LinkCost> crawl;
  for (int r = 0; r < comm->size(); ++r) crawl.push_back({1e-5, 1e-4 * (1 + r)});
  for (const bool slow : {true, false}) {
    const std::unique_ptr<DistGraph> owned = gcn_graph(g, *comm);
    DistGraph& graph = *owned;
    AdaptiveOptions aopt;
    aopt.background_solve = true;
    aopt.resolve_drift = 0;
    AdaptivePolicy policy(graph.boundary(), graph.a_halo(), *comm,
                          assign::per_sender_time_model(slow ? crawl : fast),
                          /*layers=*/2, aopt,
                          /*seed=*/5, /*measured_times=*/true);
    const std::vector<float> h = owned_rows(graph.part(), 0), grad = owned_rows(graph.part(), 3);
    int adopted = 0;
    for (int epoch = 1; epoch <= 10; ++epoch) {
      const PlannedEpoch e = run_epoch(policy, graph, epoch, h, grad);
      adopted += e.stats.background_solve_s > 0 ? 1 : 0;
      EXPECT_EQ(widths_seen(*comm, graph.boundary(), e.plan, true),
                widths_seen(*comm, graph.boundary(), e.plan, false))
          << (slow ? "slow" : "fast") << " link, epoch " << epoch;
      // Fast link: full precision from epoch 3, until the measured check of full precision (its
      // epochs 4 and 5 timed against epoch 2) may give it up on a loaded machine.
      if (!slow && (epoch == 3 || epoch == 4)) {
        EXPECT_TRUE(e.plan.forward[kLayer].full_precision) << "fast link, epoch " << epoch;
        EXPECT_TRUE(e.plan.backward[kLayer].full_precision) << "fast link, epoch " << epoch;
        EXPECT_EQ(e.stats.background_solve_s, 0.0) << "fast link, epoch " << epoch;
      }
    }
    // Alone, a rank has no messages: nothing to solve.
    if (slow && comm->size() > 1) {
      EXPECT_GE(adopted, 5) << "solves adopted from the thread";
    }
  }
}

}  // namespace
}  // namespace adaqp
