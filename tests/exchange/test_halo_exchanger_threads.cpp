// The halo exchanger above the in-process transport (comm/thread_communicator.h): W ranks as
// threads, so the exchange logic (send lists, quantized blocks with per-message widths, the
// backward scatter-add, the statistics) is tested without mpirun. The mpirun tests
// (tests/train/test_dist_exchange_modes_mpi.cpp) cover the same logic over the real transport.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/thread_communicator.h"
#include "adaqp/exchange/halo_exchanger.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/widths.h"
#include "dense_reference.h"
#include "forwarding_communicator.h"

namespace adaqp {
namespace {

// |x^ - x| <= s = (M - m) / (2^b - 1) per element (s rounded up by at most a few ulps).
double step_bound(const at::Tensor& row, int bits) {
  const double range = (row.max() - row.min()).item<double>();
  return range / static_cast<double>((1 << bits) - 1) * (1 + 1e-5) + 1e-30;
}

class HaloExchangerThreads : public ::testing::TestWithParam<int> {};

// The owner of every node of g among `world` parts.
std::vector<int32_t> owners(const Graph& g, int world) {
  PartitionOptions popt;
  popt.parts = world;
  return assign_parts(g, popt);
}

TEST_P(HaloExchangerThreads, ForwardRowsAndBackwardSumsMatchTheWholeGraph) {
  const int world = GetParam();
  const Graph g = test::small_graph(240, 41);
  const std::vector<int32_t> owner = owners(g, world);
  const int64_t d = 13;
  const at::Tensor h_all = test::random_matrix(g.num_nodes, d, 1) * 2.0;
  const at::Tensor g_all = test::random_matrix(g.num_nodes, d, 2);
  run_thread_ranks(world, [&](Communicator& comm) {
    const Part part = build_part(g, owner, comm.rank());
    const Boundary boundary = row_boundary(part);
    for (bool quantized : {false, true}) {
      HaloExchanger ex(boundary, &part.send_idx, comm, HaloExchangerOptions{true, Device::cpu()});
      SchemeOptions so;
      so.scheme = BitScheme::kRandom;
      so.seed = 3;
      const QuantPlan plan = scheme_plan(boundary, 2, so, 5);
      Precision fwd, bwd;
      if (quantized) {
        fwd = Precision{&plan.forward[1], quant::QuantKey{so.seed, 5}};
        bwd = Precision{&plan.backward[1], quant::QuantKey{so.seed, 5}};
      }
      // Forward: the halo block holds the owners' rows (within a step of their widths).
      const at::Tensor h = test::rows_of(h_all, part.owned_gid).contiguous();
      at::Tensor halo = at::zeros({part.num_halo(), d});
      ex.start_forward(h.data_ptr<float>(), d, halo.data_ptr<float>(),
                       ExchangeId{1, Direction::kForward}, fwd);
      ex.finish_forward();
      // A message's width is its key's draw, the key its node's id (the same at both ends).
      const auto width = [&](Direction dir, int64_t gid) {
        return random_bit_width(so.seed, 5, 1, dir, gid);
      };
      const at::Tensor want = test::rows_of(h_all, part.halo_gid);
      for (int64_t i = 0; i < part.num_halo(); ++i) {
        const double err = (halo[i] - want[i]).abs().max().item<double>();
        const double bound =
            quantized ? step_bound(want[i], width(Direction::kForward, part.halo_gid[i])) : 0.0;
        ASSERT_LE(err, bound) << "halo row of node " << part.halo_gid[i];
      }
      // Backward: every boundary row receives one copy of its gradient per peer holding it.
      const at::Tensor grads = test::rows_of(g_all, part.halo_gid).contiguous();
      ex.start_backward(grads.data_ptr<float>(), d, ExchangeId{1, Direction::kBackward}, bwd);
      ex.finish_backward();
      at::Tensor dh = at::zeros({part.num_owned(), d});
      ex.add_received_gradients(dh.data_ptr<float>());
      std::vector<int> copies(part.num_owned(), 0);
      for (int64_t k : part.send_idx) ++copies[k];
      // Each quantized copy is within a step of its node's backward width.
      for (int64_t i = 0; i < part.num_owned(); ++i) {
        const int64_t gid = part.owned_gid[i];
        const at::Tensor truth = g_all[gid];
        const double bound =
            quantized ? copies[i] * step_bound(truth, width(Direction::kBackward, gid)) + 1e-5
                      : 1e-5 * copies[i];
        ASSERT_LE((dh[i] - truth * copies[i]).abs().max().item<double>(), bound)
            << "boundary row of node " << gid;
      }
      // The statistics: two exchanges, their bytes (float32 rows at full precision, else each
      // row's wire format at its width: metadata and codes).
      const CommStats& st = ex.stats();
      EXPECT_EQ(st.exchanges, 2);
      const auto row_bytes = [&](Direction dir, int64_t gid) {
        return quantized ? quant::message_bytes(d, width(dir, gid))
                         : d * static_cast<int64_t>(sizeof(float));
      };
      int64_t bytes = 0;
      for (int64_t k : part.send_idx) bytes += row_bytes(Direction::kForward, part.owned_gid[k]);
      for (int64_t gid : part.halo_gid) bytes += row_bytes(Direction::kBackward, gid);
      EXPECT_EQ(st.bytes_sent, bytes);
    }
  });
}

// A rank's communicator that records, exchange by exchange, how many pieces each block it sends
// is cut into (ExchangeBuffers::piece_ends; 0 for a peer it sends nothing).
class PieceRecorder final : public test::ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;
  std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                 const ExchangeOptions& options) override {
    std::vector<size_t> pieces(static_cast<size_t>(size()), 0);
    for (int r = 0; r < size(); ++r) {
      if (r != rank() && buffers.send_bytes[r] > 0) pieces[r] = buffers.piece_ends(r, true).size();
    }
    sent_pieces.push_back(pieces);
    return inner_.exchange(buffers, options);
  }

  std::vector<std::vector<size_t>> sent_pieces;  // per exchange, per peer
};

// The CPU codec's pieces (HaloExchangerOptions::piece_elements) change how a block travels, not
// what arrives: one piece per block and up to 8 pieces (one per row at most) give bit-identical
// halo rows and gradients and the same bytes; the pieces themselves are counted as they are sent.
TEST_P(HaloExchangerThreads, PiecesChangeNothingThatArrives) {
  const int world = GetParam();
  const Graph g = test::small_graph(240, 43);
  const std::vector<int32_t> owner = owners(g, world);
  const int64_t d = 9;
  const at::Tensor h_all = test::random_matrix(g.num_nodes, d, 3);
  run_thread_ranks(world, [&](Communicator& comm) {
    const Part part = build_part(g, owner, comm.rank());
    const Boundary boundary = row_boundary(part);
    SchemeOptions so;
    so.scheme = BitScheme::kRandom;
    so.seed = 4;
    const QuantPlan plan = scheme_plan(boundary, 2, so, 7);
    const Precision fwd{&plan.forward[1], quant::QuantKey{so.seed, 7}};
    const Precision bwd{&plan.backward[1], quant::QuantKey{so.seed, 7}};
    const at::Tensor h = test::rows_of(h_all, part.owned_gid).contiguous();
    const at::Tensor grads = test::rows_of(h_all, part.halo_gid).contiguous();
    std::vector<at::Tensor> halos, dhs;
    std::vector<int64_t> bytes;
    for (int64_t piece_elements : {int64_t{1} << 30, int64_t{1}}) {
      HaloExchangerOptions opt{true, Device::cpu()};
      opt.piece_elements = piece_elements;
      PieceRecorder recorder(comm);
      HaloExchanger ex(boundary, &part.send_idx, recorder, opt);
      at::Tensor halo = at::zeros({part.num_halo(), d});
      ex.start_forward(h.data_ptr<float>(), d, halo.data_ptr<float>(),
                       ExchangeId{1, Direction::kForward}, fwd);
      ex.finish_forward();
      ex.start_backward(grads.data_ptr<float>(), d, ExchangeId{1, Direction::kBackward}, bwd);
      ex.finish_backward();
      at::Tensor dh = at::zeros({part.num_owned(), d});
      ex.add_received_gradients(dh.data_ptr<float>());
      halos.push_back(halo);
      dhs.push_back(dh);
      bytes.push_back(ex.stats().bytes_sent);
      // The forward block to r holds its send rows, the backward one the rows received from r.
      ASSERT_EQ(recorder.sent_pieces.size(), 2u);
      for (int r = 0; r < world; ++r) {
        if (r == comm.rank()) continue;
        const int64_t rows[2] = {boundary.send_count_to(r), boundary.recv_count_from(r)};
        for (int k = 0; k < 2; ++k) {
          const int64_t want =
              rows[k] == 0 ? 0 : (piece_elements == 1 ? std::min<int64_t>(rows[k], 8) : 1);
          EXPECT_EQ(static_cast<int64_t>(recorder.sent_pieces[k][r]), want)
              << "piece_elements " << piece_elements << ", " << (k == 0 ? "forward" : "backward")
              << " block to rank " << r;
        }
      }
    }
    EXPECT_TRUE(at::equal(halos[0], halos[1]));
    EXPECT_TRUE(at::equal(dhs[0], dhs[1]));
    EXPECT_EQ(bytes[0], bytes[1]);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, HaloExchangerThreads, ::testing::Values(1, 2, 3, 4),
                         [](const auto& info) { return "w" + std::to_string(info.param); });

}  // namespace
}  // namespace adaqp
