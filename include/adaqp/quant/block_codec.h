// The wire format of one peer's block of messages (docs/design.md, section 5). The rows of a
// block are grouped by message width (widths.h: the codec widths, narrowest first, then full
// precision; inside a group in block order), and the block is one contiguous byte buffer:
//   [full-precision rows][metadata of the 2-bit group][of the 4-bit group][of the 8-bit group]
//   [packed codes of the 2-bit group][of the 4-bit group][of the 8-bit group]
// with the metadata and code layout of quantizer.h (8 bytes of (m, s) per row; ceil(d*b/8) bytes
// of codes per row) and full-precision rows as d float32 values each, so a block of n_b rows at
// each width b is exactly sum_b n_b * message_bytes(d, b) bytes, without padding. Full-precision
// rows come first so that they start where the block does (aligned for a device's float stores).
// Sender and receiver build the same layout from the same widths; nothing else travels.
//
// Two descriptions of the same format: BlockLayout (the groups, for the CPU codec, which
// quantizes a group at a time), and per row (for the device codec, where each row places itself):
// a row of width b has a slot, its position in the block's rows ordered by width; a quantized
// row's metadata sit after the full-precision rows at 8 * slot, its codes at the start of its
// width's code group plus (slot - first slot of its width) rows; a full-precision row at
// (slot - first full-precision slot) rows from the block's start.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/common/philox.h"
#include "adaqp/config.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp::quant {

class BlockLayout {
 public:
  struct Group {
    int bits = 0;               // a message width
    std::vector<int64_t> rows;  // positions in the block, ascending
    int64_t meta_offset = 0;    // byte offsets in the buffer (no metadata at full precision)
    int64_t code_offset = 0;    // codes, or the values at full precision
  };

  BlockLayout() = default;
  // bits[k] (a message width of widths.h) is the width of row k of a block of n rows of width d.
  BlockLayout(const uint8_t* bits, int64_t n, int64_t d);

  int64_t bytes() const { return bytes_; }
  int64_t rows() const { return rows_; }
  const std::vector<Group>& groups() const { return groups_; }

 private:
  std::vector<Group> groups_;  // non-empty groups, by ascending width (full precision last)
  int64_t rows_ = 0;
  int64_t bytes_ = 0;
};

// Quantizes a block into `out` (layout.bytes() bytes): row k is src[src_rows[k]] (src[k] when
// src_rows is null), keyed by gids[k]; full-precision rows are copied. When `ranges` is not null,
// ranges[k] = max - min of row k (the bit-width solver's trace of the messages sent). A row with a
// NaN or infinite value is a NonFiniteError at every width (quantizer.h).
void encode_block(const BlockLayout& layout, const float* src, int64_t d, const int64_t* src_rows,
                  const int64_t* gids, const QuantKey& key, uint8_t* out, float* ranges = nullptr);

// Dequantizes a received block into dst (layout.rows() x d, row k = block row k).
void decode_block(const BlockLayout& layout, const uint8_t* in, int64_t d, float* dst);

// Rows of a block at each message width (by message_width_index).
struct BlockCounts {
  int64_t rows[kNumMessageWidths] = {};
};

// Byte offsets of one row's metadata and codes inside its block.
struct RowPlace {
  int64_t meta = 0;
  int64_t code = 0;
};

ADAQP_HOST_DEVICE RowPlace row_place(int bits, int64_t slot, const BlockCounts& c, int64_t d) {
  const int w = message_width_index(bits);
  int64_t first = 0;
  for (int k = 0; k < w; ++k) first += c.rows[k];
  const int64_t full = c.rows[kNumWidths] * full_precision_bytes(d);
  if (w == kNumWidths) return RowPlace{0, (slot - first) * full_precision_bytes(d)};
  int64_t code = full;
  for (int k = 0; k < kNumWidths; ++k) code += c.rows[k] * kMetaBytesPerRow;
  for (int k = 0; k < w; ++k) code += c.rows[k] * packed_row_bytes(d, bit_width(k));
  return RowPlace{full + slot * kMetaBytesPerRow,
                  code + (slot - first) * packed_row_bytes(d, bits)};
}

// Bytes of a block: sum over message widths b of rows_b * message_bytes(d, b).
ADAQP_HOST_DEVICE int64_t block_bytes(const BlockCounts& c, int64_t d) {
  int64_t bytes = 0;
  for (int k = 0; k < kNumMessageWidths; ++k)
    bytes += c.rows[k] * message_bytes(d, message_width(k));
  return bytes;
}

// The slot of each of the n rows of a block with widths `bits`, and the block's counts.
// InvariantError naming the row for a value that is not a message width.
void block_slots(const uint8_t* bits, int64_t n, int32_t* slot, BlockCounts* counts);

#if ADAQP_WITH_CUDA
// Device twins of encode_block / decode_block, bit-identical to them: `bits` and
// `slot` are device arrays of the block's n rows (block_slots), the other pointers device memory;
// the work is enqueued on `stream`. Row k of the block is src[src_rows[k]] (src[k] when src_rows
// is null), keyed by gids[k]; ranges (optional) receive max - min of each row. A row that cannot
// be quantized (NaN or Inf, or a range overflowing float32; at full precision NaN or Inf) is
// skipped and its global id lowered into *status (atomic min; the caller sets it to all ones
// before and reads it afterwards).
void encode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const float* src, int64_t d, const int64_t* src_rows, const int64_t* gids,
                       const QuantKey& key, uint8_t* out, float* ranges, unsigned long long* status,
                       void* stream);
// dst (n x d): dequantized row k of the block at row k.
void decode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const uint8_t* in, int64_t d, float* dst, void* stream);
#endif

}  // namespace adaqp::quant
