// Philox4x32-10, the counter-based generator of Salmon et al. (SC'11): random numbers are a pure
// function of (key, counter), so every stochastic choice (quantization rounding, dropout masks,
// random bit-widths) is reproducible and independent of threads, partitioning and device.
// Usable from host and CUDA device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ADAQP_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ADAQP_HOST_DEVICE inline
#endif

namespace adaqp {

struct PhiloxWords {
  uint32_t v[4];
};

// The round multipliers and the Weyl key increments of Philox4x32.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;
constexpr int kPhiloxRounds = 10;

ADAQP_HOST_DEVICE PhiloxWords philox4x32_10(PhiloxWords ctr, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * ctr.v[0];
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * ctr.v[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = PhiloxWords{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  return ctr;
}

// What a random stream is used for; part of every counter so streams never overlap.
enum class RngStream : uint32_t {
  kQuantForward = 0,
  kQuantBackward = 1,
  kDropout = 2,
  kRandomBits = 3,
  kInit = 4,
  kEdgeDropout = 5,
};

// The counter for (epoch, layer, stream, global node id, block of 4 elements). Global ids must be
// below 2^40; layer below 256.
ADAQP_HOST_DEVICE PhiloxWords philox_counter(uint32_t epoch, uint32_t layer, RngStream stream,
                                             uint64_t gid, uint32_t block) {
  return PhiloxWords{{block, static_cast<uint32_t>(gid),
                      (static_cast<uint32_t>(gid >> 32) & 0xFFu) | ((layer & 0xFFu) << 8) |
                          (static_cast<uint32_t>(stream) << 16),
                      epoch}};
}

// Four random words for element block `block` (elements 4*block .. 4*block+3) of node `gid`.
ADAQP_HOST_DEVICE PhiloxWords philox_block(uint64_t seed, uint32_t epoch, uint32_t layer,
                                           RngStream stream, uint64_t gid, uint32_t block) {
  return philox4x32_10(philox_counter(epoch, layer, stream, gid, block),
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Four random words for heads 4*block .. 4*block+3 of the edge from global node `src` to global
// node `dst` (below 2^40 both), so that an edge's draws depend on its ends, not on where it is
// stored. Its counter never equals a node's (philox_counter): the stream sits in bits 24-31 of word
// 2, which are zero in every node counter. Epochs below 2^24, blocks below 256.
ADAQP_HOST_DEVICE PhiloxWords philox_edge_block(uint64_t seed, uint32_t epoch, uint32_t layer,
                                                uint64_t dst, uint64_t src, uint32_t block) {
  const PhiloxWords ctr{{static_cast<uint32_t>(src), static_cast<uint32_t>(dst),
                         (static_cast<uint32_t>(src >> 32) & 0xFFu) |
                             ((static_cast<uint32_t>(dst >> 32) & 0xFFu) << 8) |
                             ((layer & 0xFFu) << 16) |
                             (static_cast<uint32_t>(RngStream::kEdgeDropout) << 24),
                         (epoch & 0xFFFFFFu) | ((block & 0xFFu) << 24)}};
  return philox4x32_10(ctr, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// A float uniform in [0, 1) from the top 24 bits of a word (exact in float32).
ADAQP_HOST_DEVICE float philox_uniform(uint32_t word) {
  return static_cast<float>(word >> 8) * (1.0f / 16777216.0f);
}

}  // namespace adaqp
