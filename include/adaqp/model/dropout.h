// Dropout masks keyed by global node id: the mask of a node's row depends only on (seed, epoch,
// layer, global id, element), never on which worker owns the node or where its row sits, so
// training on W workers draws exactly the masks of single-worker training.
#pragma once

#include <cstdint>

#include "adaqp/config.h"

namespace adaqp {

struct DropoutKey {
  uint64_t seed = 0;
  uint32_t epoch = 0;
  uint32_t layer = 0;
};

// out[i * width + e] = 0 if element e of node gids[i] is dropped, else 1 / (1 - p) (inverted
// dropout). Element e is dropped when philox_uniform(word e % 4 of
// philox_block(seed, epoch, layer, kDropout, gid, e / 4)) < p. Requires 0 <= p < 1.
void dropout_mask(const DropoutKey& key, float p, const int64_t* gids, int64_t n, int64_t width,
                  float* out);

#if ADAQP_WITH_CUDA
// The same masks on the device (bit-identical): gids and out are device arrays, the work is
// enqueued on `stream` (a cudaStream_t).
void dropout_mask_cuda(const DropoutKey& key, float p, const int64_t* gids, int64_t n,
                       int64_t width, float* out, void* stream);
#endif

}  // namespace adaqp
