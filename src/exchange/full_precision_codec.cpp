#include <memory>

#include "adaqp/exchange/message_codec.h"
#include "adaqp/kernels/gather.h"

namespace adaqp {
namespace {

size_t float_bytes(int64_t rows, int64_t d) {
  return static_cast<size_t>(rows) * static_cast<size_t>(d) * sizeof(float);
}

// Rows travel as they are: a peer's block is its rows, sent from the source rows (backward) or
// from the staging rows the pack gathers them into (forward), received into the destination rows.
class FullPrecisionCodec final : public MessageCodec {
 public:
  explicit FullPrecisionCodec(const CodecContext& ctx) : ctx_(ctx) {}

  const PeerLayout& layout(const Transfer& t) override {
    const int world = ctx_.num_parts;
    layout_.send_bytes.assign(world, 0);
    layout_.recv_bytes.assign(world, 0);
    for (int r = 0; r < world; ++r) {
      if (r == ctx_.rank) continue;
      layout_.send_bytes[r] = float_bytes(t.send_count(r), t.d);
      layout_.recv_bytes[r] = float_bytes(t.recv_count(r), t.d);
    }
    return layout_;
  }

  ExchangeHooks bind(const Transfer& t, ExchangeBuffers& b) override {
    const PeerLayout& l = layout(t);
    const float* send = t.gather ? t.staging : t.src;
    for (int r = 0; r < ctx_.num_parts; ++r) {
      if (r == ctx_.rank) continue;
      b.send[r] = send + (*t.send_offsets)[r] * t.d;
      b.send_bytes[r] = l.send_bytes[r];
      b.recv[r] = t.dst + (*t.recv_offsets)[r] * t.d;
      b.recv_bytes[r] = l.recv_bytes[r];
    }
    ExchangeHooks h;
    if (!t.gather) return h;  // sent as they are
    const Device device = ctx_.device;
    h.pack = [t, device](int r, int /*piece: one per block*/, void* stream) {
      const int64_t begin = (*t.send_offsets)[r];
      kernels::gather_rows(device, t.src, t.d, t.src_rows + begin, t.send_count(r),
                           t.staging + begin * t.d, stream);
    };
    return h;
  }

 private:
  CodecContext ctx_;
  PeerLayout layout_;
};

}  // namespace

std::unique_ptr<MessageCodec> make_full_precision_codec(const CodecContext& ctx) {
  return std::make_unique<FullPrecisionCodec>(ctx);
}

}  // namespace adaqp
