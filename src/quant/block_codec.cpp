#include "adaqp/quant/block_codec.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp::quant {
namespace {

std::string bad_width(int bits, int64_t row) {
  return "message bit-width at row " + std::to_string(row) + ": " + not_a_width(bits) +
         " (quantized) or " + std::to_string(kFullPrecisionBits) + " (full precision)";
}

}  // namespace

BlockLayout::BlockLayout(const uint8_t* bits, int64_t n, int64_t d) : rows_(n) {
  for (int k = 0; k < kNumMessageWidths; ++k) {
    Group g;
    g.bits = message_width(k);
    for (int64_t k = 0; k < n; ++k) {
      if (bits[k] == g.bits) g.rows.push_back(k);
    }
    if (!g.rows.empty()) groups_.push_back(std::move(g));
  }
  int64_t assigned = 0;
  for (const Group& g : groups_) assigned += static_cast<int64_t>(g.rows.size());
  if (assigned != n) {
    const int64_t bad =
        std::find_if(bits, bits + n, [](uint8_t b) { return !valid_message_bits(b); }) - bits;
    throw InvariantError(bad_width(bits[bad], bad));
  }
  // Full-precision rows first, then every quantized group's metadata, then their codes.
  const bool full = !groups_.empty() && groups_.back().bits == kFullPrecisionBits;
  const size_t quantized = groups_.size() - (full ? 1 : 0);
  if (full) {
    groups_.back().code_offset = 0;
    bytes_ = static_cast<int64_t>(groups_.back().rows.size()) * full_precision_bytes(d);
  }
  for (size_t k = 0; k < quantized; ++k) {
    groups_[k].meta_offset = bytes_;
    bytes_ += static_cast<int64_t>(groups_[k].rows.size()) * kMetaBytesPerRow;
  }
  for (size_t k = 0; k < quantized; ++k) {
    groups_[k].code_offset = bytes_;
    bytes_ += static_cast<int64_t>(groups_[k].rows.size()) * packed_row_bytes(d, groups_[k].bits);
  }
}

void encode_block(const BlockLayout& layout, const float* src, int64_t d, const int64_t* src_rows,
                  const int64_t* gids, const QuantKey& key, uint8_t* out, float* ranges) {
  std::vector<int64_t> index, group_gids;
  std::vector<float> group_ranges;
  for (const BlockLayout::Group& g : layout.groups()) {
    const auto n = static_cast<int64_t>(g.rows.size());
    index.resize(g.rows.size());
    group_gids.resize(g.rows.size());
    for (int64_t i = 0; i < n; ++i) {
      index[i] = src_rows != nullptr ? src_rows[g.rows[i]] : g.rows[i];
      group_gids[i] = gids[g.rows[i]];
    }
    if (ranges != nullptr) group_ranges.resize(g.rows.size());
    float* traced = ranges != nullptr ? group_ranges.data() : nullptr;
    if (g.bits == kFullPrecisionBits) {
      copy_full_precision_rows(src, d, index.data(), group_gids.data(), n, key, out + g.code_offset,
                               traced);
    } else {
      quantize_rows(src, d, index.data(), group_gids.data(), n, g.bits, key, out + g.code_offset,
                    out + g.meta_offset, traced);
    }
    if (ranges == nullptr) continue;
    for (int64_t i = 0; i < n; ++i) ranges[g.rows[i]] = group_ranges[i];
  }
}

void decode_block(const BlockLayout& layout, const uint8_t* in, int64_t d, float* dst) {
  std::fill(dst, dst + layout.rows() * d, 0.0f);
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(d);
  for (const BlockLayout::Group& g : layout.groups()) {
    if (g.bits == kFullPrecisionBits) {
      for (size_t i = 0; i < g.rows.size(); ++i)
        std::memcpy(dst + g.rows[i] * d, in + g.code_offset + row_bytes * i, row_bytes);
      continue;
    }
    dequantize_scatter_add(in + g.code_offset, in + g.meta_offset,
                           static_cast<int64_t>(g.rows.size()), d, g.bits, g.rows.data(), dst);
  }
}

void block_slots(const uint8_t* bits, int64_t n, int32_t* slot, BlockCounts* counts) {
  BlockCounts c;
  for (int64_t k = 0; k < n; ++k) {
    if (!valid_message_bits(bits[k])) throw InvariantError(bad_width(bits[k], k));
    ++c.rows[message_width_index(bits[k])];
  }
  int64_t next[kNumMessageWidths] = {};
  for (int k = 1; k < kNumMessageWidths; ++k) next[k] = next[k - 1] + c.rows[k - 1];
  for (int64_t k = 0; k < n; ++k)
    slot[k] = static_cast<int32_t>(next[message_width_index(bits[k])]++);
  *counts = c;
}

}  // namespace adaqp::quant
