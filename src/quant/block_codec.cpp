#include "adaqp/quant/block_codec.h"

#include <string>

#include "adaqp/common/error.h"

namespace adaqp::quant {

void block_slots(const uint8_t* bits, int64_t n, int32_t* slot, BlockCounts* counts) {
  BlockCounts c;
  for (int64_t k = 0; k < n; ++k) {
    if (!valid_bits(bits[k])) {
      throw InvariantError("message bit-width " + std::to_string(bits[k]) + " at row " +
                           std::to_string(k) + " is not 2, 4 or 8");
    }
    ++c.rows[width_index(bits[k])];
  }
  int64_t next[3] = {0, c.rows[0], c.rows[0] + c.rows[1]};
  for (int64_t k = 0; k < n; ++k) slot[k] = static_cast<int32_t>(next[width_index(bits[k])]++);
  *counts = c;
}

}  // namespace adaqp::quant
