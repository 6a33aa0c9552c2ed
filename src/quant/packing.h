// Row packing of b-bit codes (wire format in adaqp/quant/quantizer.h), with b a compile-time
// constant so the byte loops vectorise. Private to src/quant.
#pragma once

#include <cstdint>
#include <type_traits>

#include "adaqp/common/error.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp::quant::detail {

template <int B>
using Bits = std::integral_constant<int, B>;

// Calls f(Bits<bits>{}) for a supported bit-width; the one place that maps a runtime width to code.
template <typename F>
void dispatch_bits(int bits, F&& f) {
  switch (bits) {
    case 2:
      f(Bits<2>{});
      return;
    case 4:
      f(Bits<4>{});
      return;
    case 8:
      f(Bits<8>{});
      return;
    default:
      ADAQP_CHECK(valid_bits(bits), "bit-width " + not_a_width(bits));
  }
}

template <int B>
void pack_row(const uint8_t* codes, int64_t d, uint8_t* out) {
  constexpr int64_t kPerByte = 8 / B;
  const int64_t full = d / kPerByte;
  for (int64_t j = 0; j < full; ++j) {
    uint32_t byte = 0;
    for (int64_t k = 0; k < kPerByte; ++k) byte |= uint32_t{codes[j * kPerByte + k]} << (k * B);
    out[j] = static_cast<uint8_t>(byte);
  }
  if (full * kPerByte < d) {
    uint32_t byte = 0;
    for (int64_t k = 0; full * kPerByte + k < d; ++k)
      byte |= uint32_t{codes[full * kPerByte + k]} << (k * B);
    out[full] = static_cast<uint8_t>(byte);
  }
}

template <int B>
void unpack_row(const uint8_t* packed, int64_t d, uint8_t* codes) {
  constexpr int64_t kPerByte = 8 / B;
  constexpr uint32_t kMask = (1u << B) - 1u;
  const int64_t full = d / kPerByte;
  for (int64_t j = 0; j < full; ++j) {
    const uint32_t byte = packed[j];
    for (int64_t k = 0; k < kPerByte; ++k)
      codes[j * kPerByte + k] = static_cast<uint8_t>((byte >> (k * B)) & kMask);
  }
  for (int64_t k = 0; full * kPerByte + k < d; ++k)
    codes[full * kPerByte + k] = static_cast<uint8_t>((uint32_t{packed[full]} >> (k * B)) & kMask);
}

}  // namespace adaqp::quant::detail
