#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "adaqp/exchange/message_codec.h"
#include "adaqp/quant/block_codec.h"
#include "byte_blocks.h"
#include "codecs.h"

namespace adaqp::exchange_detail {
namespace {

// A peer's block travels in pieces of consecutive rows, each a block of its own
// (quant/block_codec.h), so that the link carries one piece while the next is quantized and the
// receiver dequantizes pieces while later ones travel: up to kMaxPieces pieces of at least
// CodecContext::piece_elements elements. Both ends cut alike from the row count and width.
constexpr int64_t kMaxPieces = 8;

struct Piece {
  int64_t first = 0;  // first row, within the peer's rows
  quant::BlockLayout layout;
  size_t begin = 0, end = 0;  // bytes, within the peer's block
};

// The pieces of a block of n rows of width d with widths bits[0 .. n).
std::vector<Piece> cut_block(const uint8_t* bits, int64_t n, int64_t d, int64_t piece_elements) {
  const int64_t count =
      n == 0 ? 1 : std::clamp<int64_t>(n * d / piece_elements, 1, std::min(n, kMaxPieces));
  std::vector<Piece> pieces(static_cast<size_t>(count));
  size_t bytes = 0;
  for (int64_t k = 0; k < count; ++k) {
    Piece& p = pieces[k];
    p.first = n * k / count;
    p.layout = quant::BlockLayout(bits + p.first, n * (k + 1) / count - p.first, d);
    p.begin = bytes;
    bytes += static_cast<size_t>(p.layout.bytes());
    p.end = bytes;
  }
  return pieces;
}

std::vector<size_t> piece_ends(const std::vector<Piece>& pieces) {
  std::vector<size_t> ends;
  for (const Piece& p : pieces) ends.push_back(p.end);
  return ends;
}

// The widths of one layer and direction cut into pieces, kept until the widths or the row width
// change.
struct Compiled {
  std::vector<uint8_t> send_bits, recv_bits;
  int64_t d = 0;
  std::vector<std::vector<Piece>> send_pieces, recv_pieces;  // per peer
  PeerLayout layout;
};

class CpuBlockCodec final : public MessageCodec {
 public:
  explicit CpuBlockCodec(const CodecContext& ctx)
      : ctx_(ctx), send_(ctx.device, ctx.quiesce), recv_(ctx.device, ctx.quiesce) {}

  const PeerLayout& layout(const Transfer& t) override { return compile(t).layout; }

  ExchangeHooks bind(const Transfer& t, ExchangeBuffers& b) override {
    Compiled* c = &compile(t);
    const std::vector<uint8_t*> send = send_.place(c->layout.send_bytes);
    const std::vector<uint8_t*> recv = recv_.place(c->layout.recv_bytes);
    for (int r = 0; r < ctx_.num_parts; ++r) {
      if (r == ctx_.rank) continue;
      b.send[r] = send[r];
      b.send_bytes[r] = c->layout.send_bytes[r];
      b.recv[r] = recv[r];
      b.recv_bytes[r] = c->layout.recv_bytes[r];
      if (b.send_bytes[r] > 0) b.send_pieces[r] = c->layout.send_pieces[r];
      if (b.recv_bytes[r] > 0) b.recv_pieces[r] = c->layout.recv_pieces[r];
    }
    const quant::QuantKey key = t.key(ctx_.rank);
    ExchangeHooks h;
    h.pack = [t, c, send, key](int r, int piece, void* /*stream*/) {
      const Piece& p = c->send_pieces[r][piece];
      const int64_t begin = (*t.send_offsets)[r] + p.first;
      const float* src = t.gather ? t.src : t.src + begin * t.d;
      const int64_t* rows = t.gather ? t.src_rows + begin : nullptr;
      float* ranges = t.precision.ranges != nullptr ? t.precision.ranges + begin : nullptr;
      quant::encode_block(p.layout, src, t.d, rows, t.gids + begin, key, send[r] + p.begin, ranges);
    };
    h.unpack = [t, c, recv](int r, int piece, void* /*stream*/) {
      const Piece& p = c->recv_pieces[r][piece];
      const int64_t begin = (*t.recv_offsets)[r] + p.first;
      quant::decode_block(p.layout, recv[r] + p.begin, t.d, t.dst + begin * t.d);
    };
    return h;
  }

 private:
  Compiled& compile(const Transfer& t) {
    check_widths(t);
    Compiled& c = by_tag_[t.id.tag()];
    const MessageBits& bits = *t.precision.bits;
    if (c.d == t.d && c.send_bits == bits.send && c.recv_bits == bits.recv) return c;
    const int world = ctx_.num_parts;
    c.d = t.d;
    c.send_bits = bits.send;
    c.recv_bits = bits.recv;
    c.send_pieces.assign(world, {});
    c.recv_pieces.assign(world, {});
    c.layout = PeerLayout{};
    c.layout.send_bytes.assign(world, 0);
    c.layout.recv_bytes.assign(world, 0);
    c.layout.send_pieces.assign(world, {});
    c.layout.recv_pieces.assign(world, {});
    for (int r = 0; r < world; ++r) {
      if (r == ctx_.rank) continue;
      c.send_pieces[r] = cut_block(bits.send.data() + (*t.send_offsets)[r], t.send_count(r), t.d,
                                   ctx_.piece_elements);
      c.recv_pieces[r] = cut_block(bits.recv.data() + (*t.recv_offsets)[r], t.recv_count(r), t.d,
                                   ctx_.piece_elements);
      c.layout.send_bytes[r] = c.send_pieces[r].back().end;
      c.layout.recv_bytes[r] = c.recv_pieces[r].back().end;
      c.layout.send_pieces[r] = piece_ends(c.send_pieces[r]);
      c.layout.recv_pieces[r] = piece_ends(c.recv_pieces[r]);
    }
    return c;
  }

  CodecContext ctx_;
  ByteBlocks send_, recv_;
  std::map<int, Compiled> by_tag_;
};

}  // namespace

std::unique_ptr<MessageCodec> make_cpu_block_codec(const CodecContext& ctx) {
  return std::make_unique<CpuBlockCodec>(ctx);
}

}  // namespace adaqp::exchange_detail
