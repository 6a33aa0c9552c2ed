// The Philox words of a whole row (CPU only), kPhiloxBatch blocks at a time: the blocks of a batch
// are computed into one array per word (structure of arrays), which gcc vectorises across blocks
// (its 10 rounds unrolled), and then interleaved into element order. Used by the quantizer's
// stochastic rounding and by the dropout masks.
#pragma once

#include <cstdint>

#include "adaqp/common/philox.h"

namespace adaqp {

constexpr uint32_t kPhiloxBatch = 16;

// Words needed by a row of d elements: whole batches, so that every batch is stored in full.
constexpr int64_t philox_row_words_size(int64_t d) {
  const int64_t batch_words = 4 * static_cast<int64_t>(kPhiloxBatch);
  return (d + batch_words - 1) / batch_words * batch_words;
}

// words[4*b + j] = word j of philox_block(seed, epoch, layer, stream, gid, b) for every block b
// of a row of d elements; `words` holds philox_row_words_size(d) entries.
inline void philox_row_words(uint64_t seed, uint32_t epoch, uint32_t layer, RngStream stream,
                             uint64_t gid, int64_t d, uint32_t* words) {
  const int64_t batches = philox_row_words_size(d) / (4 * kPhiloxBatch);
  for (int64_t batch = 0; batch < batches; ++batch) {
    uint32_t w0[kPhiloxBatch], w1[kPhiloxBatch], w2[kPhiloxBatch], w3[kPhiloxBatch];
    for (uint32_t j = 0; j < kPhiloxBatch; ++j) {
      const PhiloxWords w = philox_block(seed, epoch, layer, stream, gid,
                                         static_cast<uint32_t>(batch) * kPhiloxBatch + j);
      w0[j] = w.v[0];
      w1[j] = w.v[1];
      w2[j] = w.v[2];
      w3[j] = w.v[3];
    }
    uint32_t* out = words + batch * 4 * kPhiloxBatch;
    for (uint32_t j = 0; j < kPhiloxBatch; ++j) {
      out[4 * j] = w0[j];
      out[4 * j + 1] = w1[j];
      out[4 * j + 2] = w2[j];
      out[4 * j + 3] = w3[j];
    }
  }
}

}  // namespace adaqp
