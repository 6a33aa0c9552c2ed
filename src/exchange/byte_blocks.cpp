#include "byte_blocks.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "adaqp/tensor/torch_device.h"

namespace adaqp::exchange_detail {

namespace {

// Blocks start at multiples of 16 bytes inside a buffer.
constexpr size_t kAlign = 16;

size_t align_up(size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

std::vector<uint8_t*> ByteBlocks::place(const std::vector<size_t>& bytes) {
  std::vector<size_t> at(bytes.size() + 1, 0);
  for (size_t r = 0; r < bytes.size(); ++r) at[r + 1] = at[r] + align_up(bytes[r]);
  if (!buffer_.defined() || static_cast<size_t>(buffer_.numel()) < at.back()) {
    quiesce_();
    buffer_ = at::empty({static_cast<int64_t>(std::max<size_t>(at.back(), 1))},
                        torch_options(device_, at::kByte));
  }
  std::vector<uint8_t*> blocks(bytes.size());
  for (size_t r = 0; r < bytes.size(); ++r) blocks[r] = buffer_.data_ptr<uint8_t>() + at[r];
  return blocks;
}

}  // namespace adaqp::exchange_detail
