#include "adaqp/exchange/message_codec.h"

#include <fmt/format.h>

#include "adaqp/common/error.h"
#include "adaqp/kernels/no_cuda.h"
#include "codecs.h"

namespace adaqp {

quant::QuantKey Transfer::key(int sender) const {
  quant::QuantKey k = precision.key;
  k.layer = static_cast<uint32_t>(id.layer);
  k.stream = id.dir == Direction::kForward ? RngStream::kQuantForward : RngStream::kQuantBackward;
  // (sender + 1) times an odd constant is distinct for every sender and never 0: each sender's
  // backward key differs from every other's and from the seed the other streams use.
  if (id.dir == Direction::kBackward)
    k.seed ^= (static_cast<uint64_t>(sender) + 1) * 0x9E3779B97F4A7C15ull;
  return k;
}

void check_widths(const Transfer& t) {
  const MessageBits& bits = *t.precision.bits;
  ADAQP_CHECK(static_cast<int64_t>(bits.send.size()) == t.sends() &&
                  static_cast<int64_t>(bits.recv.size()) == t.recvs(),
              fmt::format("layer {} {}: {} send and {} receive bit-widths for {} and {} messages",
                          t.id.layer, direction_name(t.id.dir), bits.send.size(), bits.recv.size(),
                          t.sends(), t.recvs()));
}

std::unique_ptr<MessageCodec> make_quantized_codec(const CodecContext& ctx) {
  if (!ctx.device.is_cuda()) return exchange_detail::make_cpu_block_codec(ctx);
#if ADAQP_WITH_CUDA
  return exchange_detail::make_cuda_block_codec(ctx);
#else
  kernels::no_cuda("make_quantized_codec");
#endif
}

}  // namespace adaqp
