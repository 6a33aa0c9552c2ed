// The wire format of one peer's block of quantized messages (design notes, section 5). The rows
// of a block are grouped by bit-width (2, then 4, then 8; inside a group in block order), and the
// block is one contiguous byte buffer:
//   [metadata of the 2-bit group][of the 4-bit group][of the 8-bit group]
//   [packed codes of the 2-bit group][of the 4-bit group][of the 8-bit group]
// with the metadata and code layout of quantizer.h (8 bytes of (m, s) per row; ceil(d*b/8) bytes
// of codes per row). Metadata first keeps every float 4-byte aligned without padding, so a block
// of n_b rows at each width b is exactly sum_b n_b * (8 + ceil(d*b/8)) bytes. Sender and receiver
// build the same layout from the same bit-widths; nothing else travels.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/quant/quantizer.h"

namespace adaqp {

class BlockLayout {
 public:
  struct Group {
    int bits = 0;
    std::vector<int64_t> rows;  // positions in the block, ascending
    int64_t meta_offset = 0;    // byte offsets in the buffer
    int64_t code_offset = 0;
  };

  BlockLayout() = default;
  // bits[k] (2, 4 or 8) is the width of row k of a block of n rows of width d.
  BlockLayout(const uint8_t* bits, int64_t n, int64_t d);

  int64_t bytes() const { return bytes_; }
  int64_t rows() const { return rows_; }
  const std::vector<Group>& groups() const { return groups_; }

 private:
  std::vector<Group> groups_;  // non-empty groups, by ascending width
  int64_t rows_ = 0;
  int64_t bytes_ = 0;
};

// Quantizes a block into `out` (layout.bytes() bytes): row k is src[src_rows[k]] (src[k] when
// src_rows is null), keyed by gids[k]. When `ranges` is not null, ranges[k] = max - min of row k
// (the bit-width solver's trace of the messages sent).
void encode_block(const BlockLayout& layout, const float* src, int64_t d, const int64_t* src_rows,
                  const int64_t* gids, const quant::QuantKey& key, uint8_t* out,
                  float* ranges = nullptr);

// Dequantizes a received block into dst (layout.rows() x d, row k = block row k).
void decode_block(const BlockLayout& layout, const uint8_t* in, int64_t d, float* dst);

}  // namespace adaqp
