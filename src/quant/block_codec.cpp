#include "adaqp/quant/block_codec.h"

#include <algorithm>
#include <string>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp::quant {
namespace {

std::string bad_width(int bits, int64_t row) {
  return "message bit-width at row " + std::to_string(row) + ": " + not_a_width(bits);
}

}  // namespace

BlockLayout::BlockLayout(const uint8_t* bits, int64_t n, int64_t d) : rows_(n) {
  for (int k = 0; k < kNumWidths; ++k) {
    Group g;
    g.bits = bit_width(k);
    for (int64_t k = 0; k < n; ++k) {
      if (bits[k] == g.bits) g.rows.push_back(k);
    }
    if (!g.rows.empty()) groups_.push_back(std::move(g));
  }
  int64_t assigned = 0;
  for (Group& g : groups_) {
    g.meta_offset = bytes_;
    bytes_ += static_cast<int64_t>(g.rows.size()) * kMetaBytesPerRow;
    assigned += static_cast<int64_t>(g.rows.size());
  }
  for (Group& g : groups_) {
    g.code_offset = bytes_;
    bytes_ += static_cast<int64_t>(g.rows.size()) * packed_row_bytes(d, g.bits);
  }
  if (assigned != n) {
    const int64_t bad =
        std::find_if(bits, bits + n, [](uint8_t b) { return !valid_bits(b); }) - bits;
    throw InvariantError(bad_width(bits[bad], bad));
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
    quantize_rows(src, d, index.data(), group_gids.data(), n, g.bits, key, out + g.code_offset,
                  out + g.meta_offset, ranges != nullptr ? group_ranges.data() : nullptr);
    if (ranges == nullptr) continue;
    for (int64_t i = 0; i < n; ++i) ranges[g.rows[i]] = group_ranges[i];
  }
}

void decode_block(const BlockLayout& layout, const uint8_t* in, int64_t d, float* dst) {
  std::fill(dst, dst + layout.rows() * d, 0.0f);
  for (const BlockLayout::Group& g : layout.groups()) {
    dequantize_scatter_add(in + g.code_offset, in + g.meta_offset,
                           static_cast<int64_t>(g.rows.size()), d, g.bits, g.rows.data(), dst);
  }
}

void block_slots(const uint8_t* bits, int64_t n, int32_t* slot, BlockCounts* counts) {
  BlockCounts c;
  for (int64_t k = 0; k < n; ++k) {
    if (!valid_bits(bits[k])) throw InvariantError(bad_width(bits[k], k));
    ++c.rows[width_index(bits[k])];
  }
  int64_t next[kNumWidths] = {};
  for (int k = 1; k < kNumWidths; ++k) next[k] = next[k - 1] + c.rows[k - 1];
  for (int64_t k = 0; k < n; ++k) slot[k] = static_cast<int32_t>(next[width_index(bits[k])]++);
  *counts = c;
}

}  // namespace adaqp::quant
