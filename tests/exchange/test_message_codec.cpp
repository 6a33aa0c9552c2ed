// The message codecs (exchange/message_codec.h) without a transport: what one rank packs for a
// peer is copied into that peer's receive block by hand, so the codec's contract is tested alone:
// per-peer bytes are the wire formula summed over the block's rows (computed here from the
// documented format, not by the codec's helpers), pieces cover the block in order, the rows a peer
// unpacks are the sender's within a quantization step, and neither the rows received nor the
// bytes sent depend on how a block is cut into pieces (each piece is a block of its own).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/config.h"
#include "adaqp/exchange/message_codec.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/block_codec.h"
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

// Rank 0 of 3 on its own: send_rows[r] rows of width d to rank r and recv_rows[r] from it; send row
// k is src[k] keyed by node 1000 + k; every message at `width` bits; layer 3, backward.
struct Lone {
  std::vector<int64_t> send_offsets{0}, recv_offsets{0}, gids;
  std::vector<float> src, dst, ranges;
  MessageBits bits;
  Transfer t;
  Lone(const std::vector<int64_t>& send_rows, const std::vector<int64_t>& recv_rows, int64_t d,
       uint8_t width) {
    for (int64_t rows : send_rows) send_offsets.push_back(send_offsets.back() + rows);
    for (int64_t rows : recv_rows) recv_offsets.push_back(recv_offsets.back() + rows);
    const int64_t sends = send_offsets.back(), recvs = recv_offsets.back();
    gids.resize(static_cast<size_t>(sends));
    std::iota(gids.begin(), gids.end(), int64_t{1000});
    std::mt19937 gen(static_cast<uint32_t>(sends * 31 + d));
    std::uniform_real_distribution<float> dist(-3.0f, 2.0f);
    src.resize(static_cast<size_t>(sends * d));
    for (float& v : src) v = dist(gen);
    dst.assign(static_cast<size_t>(recvs * d), 0.0f);
    ranges.assign(static_cast<size_t>(sends), -1.0f);
    bits.send.assign(static_cast<size_t>(sends), width);
    bits.recv.assign(static_cast<size_t>(recvs), width);
    t.id = ExchangeId{3, Direction::kBackward};
    t.d = d;
    t.src = src.data();
    t.gids = gids.data();
    t.dst = dst.data();
    t.send_offsets = &send_offsets;
    t.recv_offsets = &recv_offsets;
    t.precision.bits = &bits;
    t.precision.key = quant::QuantKey{9, 2};
    t.precision.ranges = ranges.data();
  }
  Lone(const Lone&) = delete;
  Lone& operator=(const Lone&) = delete;
};

CodecContext lone_context(int64_t piece_elements) {
  CodecContext ctx;
  ctx.rank = 0;
  ctx.num_parts = 3;
  ctx.device = Device::cpu();
  ctx.piece_elements = piece_elements;
  ctx.quiesce = [] {};
  return ctx;
}

// A block of n rows of width d is cut into min(8, n, max(1, n d / piece_elements)) pieces: as
// many as keep each at least piece_elements values, at most 8, never an empty one; piece k holds
// rows [n k / count, n (k + 1) / count).
TEST(MessageCodec, BlocksAreCutIntoAsManyPiecesAsTheirMinimumSizeAllows) {
  struct Case {
    int64_t n, d, piece_elements;
    size_t pieces;
  };
  for (const Case c : {Case{5, 3, 1, 5}, Case{100, 3, 50, 6}, Case{100, 3, 1, 8},
                       Case{100, 3, 1000, 1}, Case{0, 3, 1, 1}}) {
    Lone s({0, c.n, 2}, {0, c.n, 2}, c.d, 4);
    auto codec = make_quantized_codec(lone_context(c.piece_elements));
    const PeerLayout& l = codec->layout(s.t);
    const auto row_bytes = static_cast<size_t>(8 + (c.d * 4 + 7) / 8);
    ASSERT_EQ(l.send_pieces[1].size(), c.pieces)
        << "n " << c.n << " pieces of " << c.piece_elements;
    size_t begin = 0;
    for (size_t k = 0; k < c.pieces; ++k) {
      const auto rows = static_cast<size_t>(c.n * static_cast<int64_t>(k + 1) / c.pieces -
                                            c.n * static_cast<int64_t>(k) / c.pieces);
      EXPECT_EQ(l.send_pieces[1][k] - begin, rows * row_bytes) << "n " << c.n << " piece " << k;
      begin = l.send_pieces[1][k];
    }
    EXPECT_EQ(l.recv_pieces[1], l.send_pieces[1]);
  }
}

// The codec's layout of an exchange follows its widths, both ways, and its row width: a codec
// keeps a layout per exchange only while neither changes.
TEST(MessageCodec, LayoutFollowsTheWidthsAndTheRowWidth) {
  Lone s({0, 5, 2}, {0, 7, 3}, 3, 2);
  auto codec = make_quantized_codec(lone_context(1 << 20));
  const auto bytes = [](int64_t rows, int64_t d, int b) {
    return static_cast<size_t>(rows * (8 + (d * b + 7) / 8));
  };
  EXPECT_EQ(codec->layout(s.t).recv_bytes[1], bytes(7, 3, 2));
  s.bits.recv.assign(s.bits.recv.size(), 8);
  EXPECT_EQ(codec->layout(s.t).recv_bytes[1], bytes(7, 3, 8));
  EXPECT_EQ(codec->layout(s.t).send_bytes[1], bytes(5, 3, 2));
  s.bits.send.assign(s.bits.send.size(), 4);
  EXPECT_EQ(codec->layout(s.t).send_bytes[1], bytes(5, 3, 4));
  s.t.d = 20;
  EXPECT_EQ(codec->layout(s.t).send_bytes[1], bytes(5, 20, 4));
  EXPECT_EQ(codec->layout(s.t).recv_bytes[2], bytes(3, 20, 8));
  // Receive widths that do not cover the messages received are refused as well.
  s.bits.recv.pop_back();
  EXPECT_THROW(codec->layout(s.t), InvariantError);
}

// What the codec sends is the block format itself: piece k of a peer's block is quant::encode_block
// of the peer's rows [n k / count, n (k + 1) / count), keyed by the transfer's seed and epoch, its
// layer and its direction's stream, a backward one's seed mixed with the sender (rank 0 here:
// seed ^ 0x9E3779B97F4A7C15, docs/design.md section 5); the ranges traced are every sent row's
// max - min in send order (whatever the piece); every peer's block starts 16-byte aligned.
TEST(MessageCodec, PiecesAreEncodedBlocksOfTheLayerAndDirectionKey) {
  for (int64_t piece_elements : {int64_t{1} << 30, int64_t{10}}) {
    Lone s({0, 13, 21}, {0, 5, 9}, 7, 4);
    std::mt19937 gen(5);
    for (uint8_t& b : s.bits.send) {
      b = static_cast<uint8_t>(
          quant::message_width(static_cast<int>(gen() % quant::kNumMessageWidths)));
    }
    auto codec = make_quantized_codec(lone_context(piece_elements));
    ExchangeBuffers b = ExchangeBuffers::none(3);
    const ExchangeHooks h = codec->bind(s.t, b);
    const quant::QuantKey key{9 ^ 0x9E3779B97F4A7C15ull, 2, 3, RngStream::kQuantBackward};
    for (int r = 1; r < 3; ++r) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.send[r]) % 16, 0u) << "send block to " << r;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.recv[r]) % 16, 0u) << "receive block from " << r;
      const std::vector<size_t> ends = b.piece_ends(r, true);
      for (size_t k = 0; k < ends.size(); ++k) h.pack(r, static_cast<int>(k), nullptr);
      const int64_t first = s.send_offsets[r], n = s.send_offsets[r + 1] - first;
      const auto count = static_cast<int64_t>(ends.size());
      if (piece_elements < 100) {
        EXPECT_GT(count, 1);
      }
      const auto* sent = static_cast<const uint8_t*>(b.send[r]);
      size_t begin = 0;
      for (int64_t k = 0; k < count; ++k) {
        const int64_t lo = first + n * k / count, rows = n * (k + 1) / count - n * k / count;
        const quant::BlockLayout layout(s.bits.send.data() + lo, rows, s.t.d);
        std::vector<uint8_t> want(static_cast<size_t>(layout.bytes()));
        quant::encode_block(layout, s.src.data() + lo * s.t.d, s.t.d, nullptr, s.gids.data() + lo,
                            key, want.data());
        ASSERT_EQ(ends[k] - begin, want.size()) << "peer " << r << " piece " << k;
        EXPECT_EQ(std::vector<uint8_t>(sent + begin, sent + ends[k]), want)
            << "peer " << r << " piece " << k;
        begin = ends[k];
      }
    }
    for (int64_t k = 0; k < s.t.sends(); ++k) {
      const float* x = s.src.data() + k * s.t.d;
      const auto [lo, hi] = std::minmax_element(x, x + s.t.d);
      EXPECT_EQ(s.ranges[k], *hi - *lo) << "row " << k << ", pieces of " << piece_elements;
    }
  }
}

// The block rank `sender` (of 3) sends rank 0 in an exchange of direction `dir` at `epoch`: Lone's
// 40 rows of width 9 at 2 bits; `rows`, if given, receives them.
std::vector<uint8_t> block_to_rank_0(int sender, Direction dir, uint32_t epoch,
                                     std::vector<float>* rows = nullptr) {
  Lone s({40, 0, 0}, {0, 0, 0}, 9, 2);
  s.t.id.dir = dir;
  s.t.precision.key.epoch = epoch;
  CodecContext ctx = lone_context(int64_t{1} << 30);
  ctx.rank = sender;
  auto codec = make_quantized_codec(ctx);
  ExchangeBuffers b = ExchangeBuffers::none(3);
  const ExchangeHooks h = codec->bind(s.t, b);
  h.pack(0, 0, nullptr);
  if (rows != nullptr) *rows = s.src;
  const auto* block = static_cast<const uint8_t*>(b.send[0]);
  return std::vector<uint8_t>(block, block + b.send_bytes[0]);
}

// Ranks 1 and 2 each send rank 0 the same rows under the same keys: a backward exchange's partial
// gradients of the same nodes, which rank 0 adds up. Each sender draws its own rounding noise there
// (shared noise would move their errors together: the sum's variance 1.5x the model's for two
// senders, 2.5x for four); a forward exchange's codes depend on the rows and keys alone.
TEST(MessageCodec, BackwardSendersDrawTheirOwnNoiseForwardOnesTheKeys) {
  for (const Direction dir : {Direction::kBackward, Direction::kForward}) {
    const std::vector<std::vector<uint8_t>> sent = {block_to_rank_0(1, dir, 2),
                                                    block_to_rank_0(2, dir, 2)};
    ASSERT_EQ(sent[0].size(), sent[1].size());
    if (dir == Direction::kForward) {
      EXPECT_EQ(sent[0], sent[1]) << "forward";
      continue;
    }
    // 40 rows of 8 bytes of range (the same at both) and 3 bytes of 2-bit codes: a code byte holds
    // 4 values each rounded up or down by the noise, alike at both senders with probability 2/3
    // on average, so about 80% of the 120 code bytes differ (none with shared noise).
    size_t differing = 0;
    for (size_t k = 0; k < sent[0].size(); ++k) differing += sent[0][k] != sent[1][k];
    EXPECT_GT(differing, 60u) << "backward: bytes differing of " << sent[0].size();
  }
}

// What the independence is for: the error of the sum rank 0 forms of the two senders' rows (the
// same rows here) has the variance of the two errors added, as the width solver's model takes it
// (400 epochs of 40 rows of 9 values at 2 bits: 0.998 of it; shared noise gives twice that for
// the same rows, 1.5 times on average for rows of independent values).
TEST(MessageCodec, TheSummedBackwardErrorsOfTwoSendersAreIndependent) {
  double sum_sq = 0, each_sq = 0;
  for (uint32_t epoch = 1; epoch <= 400; ++epoch) {
    std::vector<std::vector<float>> decoded;
    std::vector<float> rows;
    const std::vector<uint8_t> widths(40, 2);
    const quant::BlockLayout layout(widths.data(), 40, 9);
    for (int sender : {1, 2}) {
      const std::vector<uint8_t> block =
          block_to_rank_0(sender, Direction::kBackward, epoch, &rows);
      decoded.emplace_back(rows.size());
      quant::decode_block(layout, block.data(), 9, decoded.back().data());
    }
    for (size_t k = 0; k < rows.size(); ++k) {
      const double e1 = decoded[0][k] - rows[k], e2 = decoded[1][k] - rows[k];
      sum_sq += (e1 + e2) * (e1 + e2);
      each_sq += e1 * e1 + e2 * e2;
    }
  }
  EXPECT_NEAR(sum_sq / each_sq, 1.0, 0.08);
}

#if !ADAQP_WITH_CUDA
TEST(MessageCodec, QuantizedCodecForACudaDeviceNeedsCuda) {
  CodecContext ctx = lone_context(64);
  ctx.device = Device::cuda(0);
  EXPECT_THROW(make_quantized_codec(ctx), ConfigError);
}
#endif

}  // namespace
}  // namespace adaqp
