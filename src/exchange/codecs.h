// The quantized codecs behind make_quantized_codec. Private to src/exchange.
#pragma once

#include <memory>

#include "adaqp/exchange/message_codec.h"

namespace adaqp::exchange_detail {

std::unique_ptr<MessageCodec> make_cpu_block_codec(const CodecContext& ctx);
std::unique_ptr<MessageCodec> make_cuda_block_codec(const CodecContext& ctx);

}  // namespace adaqp::exchange_detail
