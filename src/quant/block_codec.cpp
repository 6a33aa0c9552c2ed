#include "adaqp/quant/block_codec.h"

#include <algorithm>
#include <array>
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

// The message width index (widths.h) of every byte, kNumMessageWidths for one that is not a
// message width. Blocks mix widths row by row, where the branches of message_width_index
// mispredict (bench_quant's block_slots: 13-16 ns a row with them, 2 ns with the table).
constexpr std::array<uint8_t, 256> width_index_table() {
  std::array<uint8_t, 256> table{};
  for (int v = 0; v < 256; ++v) {
    const int k = message_width_index(v);
    table[v] = static_cast<uint8_t>(k < 0 ? kNumMessageWidths : k);
  }
  return table;
}
constexpr std::array<uint8_t, 256> kWidthIndex = width_index_table();

// The rows of a block at each message width; InvariantError naming the first row whose value is
// not a message width.
BlockCounts count_rows(const uint8_t* bits, int64_t n) {
  BlockCounts c;
  int64_t counted = 0;
  for (int k = 0; k < kNumMessageWidths; ++k) {
    const auto width = static_cast<uint8_t>(message_width(k));
    int64_t rows = 0;
    for (int64_t i = 0; i < n; ++i) rows += bits[i] == width ? 1 : 0;
    c.rows[k] = rows;
    counted += rows;
  }
  if (counted != n) {
    const int64_t bad =
        std::find_if(bits, bits + n,
                     [](uint8_t b) { return kWidthIndex[b] == kNumMessageWidths; }) -
        bits;
    throw InvariantError(bad_width(bits[bad], bad));
  }
  return c;
}

}  // namespace

BlockLayout::BlockLayout(const uint8_t* bits, int64_t n, int64_t d) : rows_(n) {
  const BlockCounts counts = count_rows(bits, n);
  int64_t* place[kNumMessageWidths] = {};
  for (int k = 0; k < kNumMessageWidths; ++k) {
    if (counts.rows[k] == 0) continue;
    Group& g = groups_.emplace_back();
    g.bits = message_width(k);
    g.rows.resize(static_cast<size_t>(counts.rows[k]));
    place[k] = g.rows.data();
  }
  for (int64_t k = 0; k < n; ++k) *place[kWidthIndex[bits[k]]]++ = k;
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
  const BlockCounts c = count_rows(bits, n);
  int32_t next[kNumMessageWidths] = {};
  for (int k = 1; k < kNumMessageWidths; ++k)
    next[k] = next[k - 1] + static_cast<int32_t>(c.rows[k - 1]);
  for (int64_t k = 0; k < n; ++k) slot[k] = next[kWidthIndex[bits[k]]]++;
  *counts = c;
}

}  // namespace adaqp::quant
