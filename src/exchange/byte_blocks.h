// The per-peer byte blocks of one side (send or receive) of a quantized exchange, in one buffer
// on the codec's device, each block at a multiple of 16 bytes. Private to src/exchange.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "adaqp/common/device.h"

namespace adaqp::exchange_detail {

class ByteBlocks {
 public:
  ByteBlocks(const Device& device, std::function<void()> quiesce)
      : device_(device), quiesce_(std::move(quiesce)) {}

  // The start of each block of bytes[r] bytes (the buffer grows when needed, once the exchanges
  // in flight no longer use it).
  std::vector<uint8_t*> place(const std::vector<size_t>& bytes);

 private:
  Device device_;
  std::function<void()> quiesce_;
  at::Tensor buffer_;
};

}  // namespace adaqp::exchange_detail
