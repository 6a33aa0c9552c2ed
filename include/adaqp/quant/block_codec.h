// The wire format of one peer's block of quantized messages (message_codec.h: rows grouped by
// width 2, 4, 8; all metadata first, then all codes) described per row, so that a device kernel
// can place each row by itself. A row of width b has a slot: its position in the block's rows
// ordered by width (block order within a width). Its metadata (m, s) sit at byte 8 * slot, its
// codes at the start of its width's code group plus (slot - first slot of its width) rows.
#pragma once

#include <cstdint>

#include "adaqp/common/philox.h"
#include "adaqp/config.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp::quant {

// Rows of a block at 2, 4 and 8 bits.
struct BlockCounts {
  int64_t rows[3] = {0, 0, 0};
};

constexpr int64_t kMetaBytesPerRow = kMetaFloatsPerRow * static_cast<int64_t>(sizeof(float));

ADAQP_HOST_DEVICE int width_index(int bits) {
  return bits == 2 ? 0 : bits == 4 ? 1 : 2;
}

// Byte offsets of one row's metadata and codes inside its block.
struct RowPlace {
  int64_t meta = 0;
  int64_t code = 0;
};

ADAQP_HOST_DEVICE RowPlace row_place(int bits, int64_t slot, const BlockCounts& c, int64_t d) {
  const int w = width_index(bits);
  int64_t first = 0;
  int64_t code = (c.rows[0] + c.rows[1] + c.rows[2]) * kMetaBytesPerRow;
  for (int k = 0; k < w; ++k) {
    first += c.rows[k];
    code += c.rows[k] * packed_row_bytes(d, 2 << k);
  }
  return RowPlace{slot * kMetaBytesPerRow, code + (slot - first) * packed_row_bytes(d, bits)};
}

// Bytes of a block: sum over widths b of rows_b * (8 + ceil(d*b/8)).
ADAQP_HOST_DEVICE int64_t block_bytes(const BlockCounts& c, int64_t d) {
  int64_t bytes = 0;
  for (int k = 0; k < 3; ++k) bytes += c.rows[k] * (kMetaBytesPerRow + packed_row_bytes(d, 2 << k));
  return bytes;
}

// The slot of each of the n rows of a block with widths `bits`, and the block's counts.
// InvariantError naming the row for a width other than 2, 4, 8.
void block_slots(const uint8_t* bits, int64_t n, int32_t* slot, BlockCounts* counts);

#if ADAQP_WITH_CUDA
// Device twins of encode_block / decode_block (message_codec.h), bit-identical to them: `bits` and
// `slot` are device arrays of the block's n rows (block_slots), the other pointers device memory;
// the work is enqueued on `stream`. Row k of the block is src[src_rows[k]] (src[k] when src_rows
// is null), keyed by gids[k]; ranges (optional) receive max - min of each row. A row that cannot
// be quantized (NaN or Inf, or a range overflowing float32) is skipped and its global id lowered
// into *status (atomic min; the caller sets it to all ones before and reads it afterwards).
void encode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const float* src, int64_t d, const int64_t* src_rows, const int64_t* gids,
                       const QuantKey& key, uint8_t* out, float* ranges, unsigned long long* status,
                       void* stream);
// dst (n x d): dequantized row k of the block at row k.
void decode_block_cuda(const uint8_t* bits, const int32_t* slot, const BlockCounts& counts,
                       const uint8_t* in, int64_t d, float* dst, void* stream);
#endif

}  // namespace adaqp::quant
