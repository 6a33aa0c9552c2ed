// Reuse of large host blocks between libtorch's tensors (the CPU twin of the CUDA caching
// allocator). glibc serves every block of at least its mmap threshold (set to kMinBytes by
// src/cli/command_line.cpp) with a fresh mmap and returns it with munmap, so each epoch's
// activations and gradients are new pages that the kernel zeroes on first touch: a fifth of a CPU
// epoch at 200k nodes (GCN 3x256; docs/memory.md, "Reused host blocks"). kMinBytes is where
// libtorch starts aligning blocks to 2 MiB for transparent huge pages (THP_MEM_ALLOC_ENABLE, set by
// the CLI): left in glibc's heap, such blocks fragmented it, and it grew by fresh pages for about
// ten epochs. Blocks of at least kMinBytes are rounded up to whole MiB and kept when freed; a
// request takes the smallest kept block of at least its rounded size and at most a quarter more
// (the most recently kept among equals: sizes change a little between layers and epochs, and a
// block taken only at its own size was freed and made again at 200k nodes, 9 GB in 12 epochs). Two
// bounds keep the resident set near what it would be without the cache:
// - a new block is made only after the oldest kept blocks are freed until the live tensors'
//   blocks, kept blocks and the new block together are at most the most seen (new block included)
//   plus the larger of 1/16 of it and kSlackBytes (below that, blocks an epoch takes in turn
//   pushed each other out and were made again every epoch);
// - trim(), at the start of every measured interval (each phase and each epoch), frees the blocks
//   kept before the previous trim and not taken since.
// After the last epoch the trainer frees every kept block (clear()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace adaqp {

class HostBlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{2} << 20;
  static constexpr size_t kSlackBytes = size_t{32} << 20;

  // `release` frees a block for good (the allocator the blocks come from).
  explicit HostBlockCache(void (*release)(void*)) : release_(release) {}
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  // The size to allocate for a request of `bytes`: whole MiB from kMinBytes, else `bytes`.
  static size_t block_bytes(size_t bytes);

  // A kept block of `block` bytes (a block_bytes value) up to a quarter more, or nullptr; `taken`
  // gets its size.
  void* take(size_t block, size_t& taken);

  // Frees the oldest kept blocks until a new block of `block` bytes fits the bound above, with
  // `live_bytes` in live tensors' blocks now.
  void make_room(size_t block, int64_t live_bytes);

  // Keeps a freed block of `block` bytes (a block_bytes value); one below kMinBytes is freed.
  void keep(void* data, size_t block);

  // Frees the blocks kept before the previous trim and not taken since.
  void trim();

  // Frees every kept block (before retrying an allocation that failed).
  void clear();

  // Bytes in kept blocks now.
  size_t idle_bytes() const;

 private:
  struct Kept {
    void* data;
    size_t bytes;
    uint64_t generation;  // trims before it was kept
  };
  // Frees kept blocks of generations below `generation`, outside the lock (munmap takes time).
  void release_older(uint64_t generation);
  void release_all(const std::vector<void*>& blocks) const;

  void (*release_)(void*);
  mutable std::mutex mutex_;
  std::vector<Kept> kept_;  // oldest first
  size_t idle_ = 0;
  uint64_t generation_ = 0;
  size_t peak_ = 0;  // the most live bytes seen, new blocks included
};

}  // namespace adaqp
