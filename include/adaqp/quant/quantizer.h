// Stochastic message quantization (docs/design.md, section 5): each row (message) x in R^d becomes
// d codes of b bits (b in {2, 4, 8}) plus its metadata (m, s); dequantized x^_i = m + s*q_i with
// |E[x^_i] - x_i| <= s / 512 up to float rounding (the rounding's 8-bit dither) and Var[x^_i] =
// s^2 f_i (1 - f_i), at most s^2 / 4 (f_i the fractional part of (x_i - m) / s on the dither's
// 1/256 grid). The
// per-element formulas are in quant_math.h; the widths and the wire size of a message in widths.h.
//
// Wire format of a block of n rows at bit-width b (sender and receiver both know n, d and b):
// - packed codes: n rows of packed_row_bytes(d, b) = ceil(d*b/8) bytes each, back to back; code k
//   of a row occupies bits (k*b) % 8 .. (k*b) % 8 + b - 1 of the row's byte k*b/8 (little-endian
//   within a byte); the unused high bits of a row's last byte are zero.
// - metadata: n pairs of float32 (m, s), 8 bytes per row, m at bytes 8i .. 8i + 3 and s at
//   8i + 4 .. 8i + 7 (host byte order, read and written bytewise: no alignment is required).
// Why float32 metadata and not two bfloat16: m is then the exact row minimum, so a constant row
// (s = 0) comes back exactly without a special case, and s is rounded up in float32 only, so any
// finite range works (1e30 spreads included) and no code is ever clamped (which would bias the
// estimate). The cost is 4 bytes per row more than bfloat16: 6% of a 2-bit row of d = 256.
//
// Randomness: element e of the row of global node g uses the byte quant_random_byte(w, e), byte
// e % 4 of word (e / 4) % 4 of w = philox_block(seed, epoch, layer, stream, g, e / 16). Codes are a
// pure function of the input values and the key: independent of thread count, row order,
// partitioning and device; the CUDA block codec (block_codec.h) gives bit-identical packed bytes
// and metadata.
//
// A row with a NaN or infinite value, or whose range or largest dequantized value overflows
// float32, cannot be quantized: NonFiniteError names the layer, direction, node and element.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "adaqp/config.h"
#include "adaqp/quant/widths.h"

namespace adaqp::quant {

// The random stream of one exchange: one layer, one direction (stream is kQuantForward or
// kQuantBackward), one epoch.
struct QuantKey {
  uint64_t seed = 0;
  uint32_t epoch = 0;
  uint32_t layer = 0;
  RngStream stream = RngStream::kQuantForward;
};

class NonFiniteError : public Error {
 public:
  NonFiniteError(const QuantKey& key, int64_t gid, const std::string& what)
      : Error("cannot quantize the layer " + std::to_string(key.layer) + " " +
              (key.stream == RngStream::kQuantBackward ? "backward" : "forward") +
              " message of node " + std::to_string(gid) + " (epoch " + std::to_string(key.epoch) +
              "): " + what + "; the training has diverged") {}
  // `e` with `more` appended: what the runtime adds (advice, the last good checkpoint).
  NonFiniteError(const NonFiniteError& e, const std::string& more)
      : Error(std::string(e.what()) + more) {}
};

// What makes a row of d values unquantizable (the first NaN or infinite element, else its range),
// for the CPU codec's error. The CUDA codec names the node without it: its rows stay on the device.
inline std::string describe_unquantizable_row(const float* row, int64_t d) {
  char text[160];
  float lo = row[0], hi = row[0];
  for (int64_t e = 0; e < d; ++e) {
    if (!std::isfinite(row[e])) {
      std::snprintf(text, sizeof(text), "element %lld is %g", static_cast<long long>(e),
                    static_cast<double>(row[e]));
      return text;
    }
    lo = row[e] < lo ? row[e] : lo;
    hi = row[e] > hi ? row[e] : hi;
  }
  std::snprintf(text, sizeof(text), "its value range [%g, %g] overflows float32",
                static_cast<double>(lo), static_cast<double>(hi));
  return text;
}

// Quantizes n rows of width d: row i is src[row_index[i]] (src[i] when row_index is null), so the
// gather of a send list happens here. gids[i] is the global node id of row i (the RNG key).
// Writes n packed rows to `packed` and n metadata pairs to `meta` (bytes); when `ranges` is not
// null also ranges[i] = M_i - m_i (the bit-width solver's input for the next epoch). OpenMP over
// rows. Throws NonFiniteError for the first (lowest i) unquantizable row; outputs are then
// unspecified.
void quantize_rows(const float* src, int64_t d, const int64_t* row_index, const int64_t* gids,
                   int64_t n, int bits, const QuantKey& key, uint8_t* packed, uint8_t* meta,
                   float* ranges);

// The full-precision twin of quantize_rows: row i's d values, float32, to out + 4 d i (bytes, no
// alignment required), ranges as there; the same NonFiniteError for a NaN or infinite value.
void copy_full_precision_rows(const float* src, int64_t d, const int64_t* row_index,
                              const int64_t* gids, int64_t n, const QuantKey& key, uint8_t* out,
                              float* ranges);

// dst[i, :] = dequantized row i, for n contiguous rows (a received halo block).
void dequantize_rows(const uint8_t* packed, const uint8_t* meta, int64_t n, int64_t d, int bits,
                     float* dst);

// dst[row_index[i], :] += dequantized row i (received partial gradients into boundary rows). The
// entries of row_index must be distinct (one peer's block never names a row twice): rows are
// updated in parallel.
void dequantize_scatter_add(const uint8_t* packed, const uint8_t* meta, int64_t n, int64_t d,
                            int bits, const int64_t* row_index, float* dst);

// Packs / unpacks the d codes (each < 2^bits) of one row in the wire format above.
void pack_codes(const uint8_t* codes, int64_t d, int bits, uint8_t* packed);
void unpack_codes(const uint8_t* packed, int64_t d, int bits, uint8_t* codes);

}  // namespace adaqp::quant
