// Software prefetch for loops over scattered rows (a send list's, a scatter's targets): the
// hardware prefetchers follow sequential streams, not a list of row ids, so each row of such a loop
// would wait for memory (and the codec's loops ask for contiguous rows too, which some cores'
// prefetchers follow too slowly: quantizer.cpp). The loop asks for the row it reaches kPrefetchRows
// rows later, every cache line of it, and finds it in cache by then. Only a hint: no result
// changes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace adaqp {

// How many rows ahead a loop over scattered rows asks for its rows (bench_quant --stride 4 on Zen
// 3, rows of 256 floats: 1, 2, 4 and 8 gave the same speed within the runs' spread, each about 1.5x
// quantizing's without the hint; 4 leaves room for a slower memory).
inline constexpr int64_t kPrefetchRows = 4;

// Asks for every cache line of `bytes` bytes at `p`, to be read (Write false) or written.
template <bool Write = false>
inline void prefetch_bytes(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (size_t k = 0; k < bytes; k += 64) __builtin_prefetch(c + k, Write ? 1 : 0, 3);
}

}  // namespace adaqp
