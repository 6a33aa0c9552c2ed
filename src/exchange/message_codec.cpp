#include "adaqp/exchange/message_codec.h"

#include <fmt/format.h>

#include "adaqp/common/error.h"
#include "adaqp/kernels/no_cuda.h"
#include "codecs.h"

namespace adaqp {

quant::QuantKey Transfer::key() const {
  quant::QuantKey k = precision.key;
  k.layer = static_cast<uint32_t>(id.layer);
  k.stream = id.dir == Direction::kForward ? RngStream::kQuantForward : RngStream::kQuantBackward;
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
