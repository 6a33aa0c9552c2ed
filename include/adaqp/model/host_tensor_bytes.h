// Bytes libtorch holds in host (CPU) tensors: the CPU twin of the CUDA allocator's statistics.
// The resident set (common/memory.h) also counts code, the allocator's free lists and the
// BLAS library's own buffers, which differ between CPUs; these bytes depend only on the tensors a
// run allocates, so they show what a change to the model or the trainer saves.
#pragma once

#include <cstdint>

namespace adaqp {

// Makes libtorch's CPU allocator count what it allocates from now on (once per process; later
// calls do nothing), and keep its large freed blocks for reuse (model/host_block_cache.h). Tensors
// allocated before are not counted, also when they are freed. Call it before libtorch's first
// raw_allocate whose memory it frees through the current allocator (oneDNN's scratch memory): a
// free of such memory after the switch would read a header that is not there.
void count_host_tensor_bytes();

// Frees the large blocks kept since before the previous call and not reused since.
void trim_host_blocks();
// Frees every large block kept for reuse (once no epoch follows to take them).
void release_host_blocks();
// Bytes in large blocks kept for reuse now.
int64_t idle_host_block_bytes();

// Bytes in counted host tensors now, and their peak since the last reset; 0 before counting.
int64_t host_tensor_bytes();
int64_t host_tensor_peak_bytes();
// Makes the peak the bytes held now.
void reset_host_tensor_peak();

}  // namespace adaqp
