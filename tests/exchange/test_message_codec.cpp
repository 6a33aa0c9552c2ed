// The message codecs (exchange/message_codec.h) without a transport: what one rank packs for a
// peer is copied into that peer's receive block by hand, so the codec's contract is tested alone:
// per-peer bytes are the wire formula summed over the block's rows (computed here from the
// documented format, not by the codec's helpers), pieces cover the block in order, the rows a peer
// unpacks are the sender's within a quantization step, and neither the rows received nor the
// bytes sent depend on how a block is cut into pieces (each piece is a block of its own).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/exchange/message_codec.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "dense_reference.h"

namespace adaqp {
namespace {

constexpr int kWorld = 3;
constexpr int64_t kWidth = 11;

struct Ranks {
  Graph g = test::small_graph(300, 17);
  std::vector<Part> parts;
  Ranks() {
    PartitionOptions popt;
    popt.parts = kWorld;
    const std::vector<int32_t> owner = assign_parts(g, popt);
    for (int r = 0; r < kWorld; ++r) parts.push_back(build_part(g, owner, r));
  }
};

CodecContext context(const Part& part, int64_t piece_elements) {
  CodecContext ctx;
  ctx.rank = part.rank;
  ctx.num_parts = part.num_parts;
  ctx.device = Device::cpu();
  ctx.piece_elements = piece_elements;
  ctx.quiesce = [] {};
  return ctx;
}

// The forward exchange of `part`: its boundary rows of h (all nodes' rows) to its peers.
struct Forward {
  at::Tensor h, halo, staging;
  std::vector<int64_t> gids;
  Transfer t;
};

Forward forward(const Part& part, const at::Tensor& h_all, const MessageBits* bits) {
  Forward f;
  f.h = test::rows_of(h_all, part.owned_gid).contiguous();
  f.halo = at::zeros({part.num_halo(), kWidth});
  f.staging = at::zeros({static_cast<int64_t>(part.send_idx.size()) * kWidth + 1});
  f.gids = row_boundary(part).send_keys;
  f.t.id = ExchangeId{1, Direction::kForward};
  f.t.d = kWidth;
  f.t.src = f.h.data_ptr<float>();
  f.t.gather = true;
  f.t.src_rows = part.send_idx.data();
  f.t.gids = f.gids.data();
  f.t.dst = f.halo.data_ptr<float>();
  f.t.staging = f.staging.data_ptr<float>();
  f.t.send_offsets = &part.send_offsets;
  f.t.recv_offsets = &part.halo_offsets;
  f.t.precision.bits = bits;
  f.t.precision.key = quant::QuantKey{9, 2};
  return f;
}

// Runs the forward exchange of every rank through its codec, moving the bytes by hand; returns
// what each rank sent (per peer).
std::vector<std::vector<std::vector<uint8_t>>> exchange(
    std::vector<Forward>& fw, std::vector<std::unique_ptr<MessageCodec>>& codecs) {
  std::vector<ExchangeBuffers> b;
  std::vector<ExchangeHooks> h;
  for (int r = 0; r < kWorld; ++r) {
    b.push_back(ExchangeBuffers::none(kWorld));
    h.push_back(codecs[r]->bind(fw[r].t, b[r]));
  }
  std::vector<std::vector<std::vector<uint8_t>>> sent(kWorld,
                                                      std::vector<std::vector<uint8_t>>(kWorld));
  for (int s = 0; s < kWorld; ++s) {
    for (int r = 0; r < kWorld; ++r) {
      if (r == s) continue;
      EXPECT_EQ(b[s].send_bytes[r], b[r].recv_bytes[s]) << s << " -> " << r;
      const std::vector<size_t> pieces = b[s].piece_ends(r, true);
      EXPECT_EQ(pieces, b[r].piece_ends(s, false)) << s << " -> " << r;
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (h[s].pack) h[s].pack(r, static_cast<int>(k), nullptr);
      }
      const auto* from = static_cast<const uint8_t*>(b[s].send[r]);
      sent[s][r].assign(from, from + b[s].send_bytes[r]);
      std::memcpy(b[r].recv[s], from, b[s].send_bytes[r]);
      for (size_t k = 0; k < pieces.size(); ++k) {
        if (h[r].unpack) h[r].unpack(s, static_cast<int>(k), nullptr);
      }
    }
  }
  return sent;
}

TEST(MessageCodec, QuantizedBlocksAreTheWireFormulaAndArriveWithinAStep) {
  const Ranks ranks;
  const at::Tensor h_all = test::random_matrix(ranks.g.num_nodes, kWidth, 5) * 3.0;
  SchemeOptions so;
  so.scheme = BitScheme::kRandom;
  so.seed = 4;
  std::vector<QuantPlan> plans;
  for (const Part& p : ranks.parts) plans.push_back(scheme_plan(row_boundary(p), 2, so, 1));

  // With one piece per block: the halo rows each rank received, and the bytes per link.
  std::vector<at::Tensor> reference_rows;
  std::vector<size_t> reference_bytes;
  for (int64_t piece_elements : {int64_t{1} << 30, int64_t{20}}) {
    std::vector<Forward> fw;
    std::vector<std::unique_ptr<MessageCodec>> codecs;
    for (int r = 0; r < kWorld; ++r) {
      fw.push_back(forward(ranks.parts[r], h_all, &plans[r].forward[1]));
      codecs.push_back(make_quantized_codec(context(ranks.parts[r], piece_elements)));
    }
    for (int r = 0; r < kWorld; ++r) {
      const Part& part = ranks.parts[r];
      const PeerLayout& l = codecs[r]->layout(fw[r].t);
      for (int peer = 0; peer < kWorld; ++peer) {
        size_t want = 0;  // 8 bytes of (m, s) and ceil(d * b / 8) bytes of codes per row
        for (int64_t k = part.send_offsets[peer]; k < part.send_offsets[peer + 1]; ++k) {
          const int b = plans[r].forward[1].send[k];
          want += peer == r ? 0 : 8 + (kWidth * b + 7) / 8;
        }
        EXPECT_EQ(l.send_bytes[peer], want) << "rank " << r << " to " << peer;
      }
    }
    const auto sent = exchange(fw, codecs);
    for (int r = 0; r < kWorld; ++r) {
      const Part& part = ranks.parts[r];
      const at::Tensor want = test::rows_of(h_all, part.halo_gid);
      for (int64_t i = 0; i < part.num_halo(); ++i) {
        const double range = (want[i].max() - want[i].min()).item<double>();
        const int b = plans[r].forward[1].recv[i];
        const double step = range / ((1 << b) - 1) * (1 + 1e-5) + 1e-30;
        ASSERT_LE((fw[r].halo[i] - want[i]).abs().max().item<double>(), step)
            << "rank " << r << " halo row of node " << part.halo_gid[i];
      }
    }
    std::vector<size_t> bytes;
    for (const auto& by_rank : sent) {
      for (const std::vector<uint8_t>& block : by_rank) bytes.push_back(block.size());
    }
    if (reference_rows.empty()) {
      for (const Forward& f : fw) reference_rows.push_back(f.halo.clone());
      reference_bytes = bytes;
      continue;
    }
    EXPECT_EQ(bytes, reference_bytes) << "cutting blocks into pieces changed the bytes sent";
    for (int r = 0; r < kWorld; ++r) {
      EXPECT_TRUE(at::equal(fw[r].halo, reference_rows[r]))
          << "cutting blocks into pieces changed the rows rank " << r << " received";
    }
  }
}

TEST(MessageCodec, FullPrecisionRowsArriveExactly) {
  const Ranks ranks;
  const at::Tensor h_all = test::random_matrix(ranks.g.num_nodes, kWidth, 6);
  std::vector<Forward> fw;
  std::vector<std::unique_ptr<MessageCodec>> codecs;
  for (int r = 0; r < kWorld; ++r) {
    fw.push_back(forward(ranks.parts[r], h_all, nullptr));
    codecs.push_back(make_full_precision_codec(context(ranks.parts[r], 1)));
  }
  for (int r = 0; r < kWorld; ++r) {
    const Part& part = ranks.parts[r];
    const PeerLayout& l = codecs[r]->layout(fw[r].t);
    for (int peer = 0; peer < kWorld; ++peer) {
      const int64_t rows = peer == r ? 0 : part.send_offsets[peer + 1] - part.send_offsets[peer];
      EXPECT_EQ(l.send_bytes[peer], static_cast<size_t>(rows * kWidth * 4));
    }
  }
  exchange(fw, codecs);
  for (int r = 0; r < kWorld; ++r) {
    EXPECT_TRUE(at::equal(fw[r].halo, test::rows_of(h_all, ranks.parts[r].halo_gid)))
        << "rank " << r;
  }
}

TEST(MessageCodec, WidthsThatDoNotCoverTheMessagesAreRefused) {
  const Ranks ranks;
  const at::Tensor h_all = test::random_matrix(ranks.g.num_nodes, kWidth, 7);
  MessageBits bits;
  bits.send.assign(ranks.parts[0].send_idx.size() + 1, 4);
  bits.recv.assign(static_cast<size_t>(ranks.parts[0].num_halo()), 4);
  Forward f = forward(ranks.parts[0], h_all, &bits);
  auto codec = make_quantized_codec(context(ranks.parts[0], 64));
  EXPECT_THROW(codec->layout(f.t), InvariantError);
}

}  // namespace
}  // namespace adaqp
