// The bit-widths a quantized message can travel at, and the one formula for its size on the wire
// (docs/design.md, section 5). The set of widths is the table in bit_width(); everything else
// (validation, error text, block layouts, the solver's byte costs, the width codes of the
// adaptive scheme's broadcast) is derived from it. A new width is a new table entry plus its
// packing instantiation (src/quant/packing.h dispatch_bits, cuda/block_codec.cu dispatch_width).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/common/philox.h"

namespace adaqp::quant {

constexpr int kNumWidths = 3;

// The k-th supported width, narrowest first (k < kNumWidths).
ADAQP_HOST_DEVICE constexpr int bit_width(int k) {
  constexpr int kTable[kNumWidths] = {2, 4, 8};
  return kTable[k];
}

// The position of `bits` in the table, -1 for an unsupported width.
ADAQP_HOST_DEVICE constexpr int width_index(int bits) {
  for (int k = 0; k < kNumWidths; ++k) {
    if (bit_width(k) == bits) return k;
  }
  return -1;
}

constexpr bool valid_bits(int bits) {
  return width_index(bits) >= 0;
}

// Every supported width, narrowest first (the default set a solver may choose from).
inline std::vector<int> all_widths() {
  std::vector<int> widths;
  for (int k = 0; k < kNumWidths; ++k) widths.push_back(bit_width(k));
  return widths;
}

// A message may also travel at full precision: its d values as float32, no metadata, no rounding
// (the adaptive scheme's choice where a link is fast enough, docs/design.md, section 6). In a
// block it is one more width beside the codec widths, which it is not one of.
constexpr int kFullPrecisionBits = 32;

// The widths a message can travel at: the codec widths, narrowest first, then full precision.
constexpr int kNumMessageWidths = kNumWidths + 1;
ADAQP_HOST_DEVICE constexpr int message_width(int k) {
  return k < kNumWidths ? bit_width(k) : kFullPrecisionBits;
}
// The position of `bits` among the message widths, -1 for any other value.
ADAQP_HOST_DEVICE constexpr int message_width_index(int bits) {
  return bits == kFullPrecisionBits ? kNumWidths : width_index(bits);
}
constexpr bool valid_message_bits(int bits) {
  return message_width_index(bits) >= 0;
}

// The wire size of one message of d values at full precision.
ADAQP_HOST_DEVICE constexpr int64_t full_precision_bytes(int64_t d) {
  return d * static_cast<int64_t>(sizeof(float));
}

// Per-message metadata of a quantized message: float32 (m, s).
constexpr int64_t kMetaBytesPerRow = 8;

// Bytes of one row's packed codes: ceil(d * bits / 8).
ADAQP_HOST_DEVICE constexpr int64_t packed_row_bytes(int64_t d, int bits) {
  return (d * bits + 7) / 8;
}

// THE wire size of one message of d values at a message width: metadata and codes when
// quantized, the raw values at full precision.
ADAQP_HOST_DEVICE constexpr int64_t message_bytes(int64_t d, int bits) {
  return bits == kFullPrecisionBits ? full_precision_bytes(d)
                                    : kMetaBytesPerRow + packed_row_bytes(d, bits);
}

// "2, 4 or 8" (from the table), and "<bits> is not 2, 4 or 8", for the error of whoever met the
// width.
std::string width_list();
std::string not_a_width(int bits);

}  // namespace adaqp::quant
