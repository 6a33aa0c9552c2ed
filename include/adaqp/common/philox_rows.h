// Philox words many blocks at a time (CPU only), for the loops that draw random values element by
// element: the first blocks of one node's stream (the quantizer's rounding, the dropout masks), or
// one word each of scattered blocks (the dropout mask at a sparse matrix's entries). Computed
// kPhiloxBatch blocks at a time: rows with AVX-512 as two interleaved vectors of 16 blocks (each
// round's multiplies wait on the previous round, so independent chains keep the unit busy), with
// AVX2 as four of 8 blocks, else block by block; a row's last batch computes only the vectors it
// needs. All give philox_block's words exactly.
#pragma once

#include <cstdint>

#include "adaqp/common/philox.h"

namespace adaqp {

constexpr int64_t kPhiloxBatch = 32;

// The words buffer for `blocks` blocks: whole batches, so that every vector is stored in full.
constexpr int64_t philox_row_words_size(int64_t blocks) {
  return (blocks + kPhiloxBatch - 1) / kPhiloxBatch * kPhiloxBatch * 4;
}

// words[4*b + j] = word j of philox_block(seed, epoch, layer, stream, gid, b) for every block
// b < blocks; `words` holds philox_row_words_size(blocks) entries, of which those past block
// `blocks` may or may not be written.
void philox_row_words(uint64_t seed, uint32_t epoch, uint32_t layer, RngStream stream, uint64_t gid,
                      int64_t blocks, uint32_t* words);

// One word of each of n <= kPhiloxBatch scattered blocks of `stream`: out[j] = word pick[j] (0 to
// 3) of philox_block(seed, epoch, layer, stream, gids[j], blocks[j]). For draws at scattered
// elements (the dropout mask at a sparse matrix's entries): with AVX2 as four vectors of 8 blocks,
// else block by block.
void philox_picked_words(uint64_t seed, uint32_t epoch, uint32_t layer, RngStream stream,
                         const uint64_t* gids, const uint32_t* blocks, const uint32_t* pick,
                         int64_t n, uint32_t* out);

}  // namespace adaqp
