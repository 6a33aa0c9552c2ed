#include "adaqp/model/host_tensor_bytes.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "adaqp/model/host_block_cache.h"

namespace adaqp {

namespace {

std::atomic<int64_t> g_bytes{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_block_bytes{0};  // the blocks of live tensors, headers and rounding included

void add(int64_t n) {
  const int64_t now = g_bytes.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Wraps libtorch's CPU allocator, through a cache of large blocks (model/host_block_cache.h). Each
// block carries the tensor's bytes and its own size (a kept block taken may be larger than asked)
// in a header of one alignment unit in front of the data, so the data stays aligned, the data
// pointer stays its own context (as raw_allocate and libtorch's simple data pointers require) and a
// free needs no lookup.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base)
      : base_(base), base_free_(base->raw_deleter()), cache_(base_free_) {
    if (base_free_ == nullptr)
      throw std::logic_error("libtorch's CPU allocator has no raw deleter to count frees with");
  }

  c10::DataPtr allocate(size_t n) override {
    // No header for nothing; and a size the header and the rounding would wrap around goes to
    // libtorch's allocator, whose own check refuses it with its own error.
    if (n == 0 || n > kLargestCounted) return base_->allocate(n);
    size_t bytes = HostBlockCache::block_bytes(n + kHeader);
    char* block = new_block(bytes);
    reinterpret_cast<size_t*>(block)[0] = n;
    reinterpret_cast<size_t*>(block)[1] = bytes;
    add(static_cast<int64_t>(n));
    g_block_bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    void* data = block + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  static CountingAllocator* instance();

  HostBlockCache& cache() { return cache_; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    base_->copy_data(dest, src, count);
  }

 private:
  static constexpr size_t kHeader = c10::gAlignment;
  static_assert(kHeader >= 2 * sizeof(size_t), "the header holds two sizes");
  static constexpr size_t kLargestCounted =
      static_cast<size_t>(std::numeric_limits<std::ptrdiff_t>::max()) - kHeader - (size_t{1} << 20);

  static void release(void* data) {
    if (data == nullptr) return;
    char* block = static_cast<char*>(data) - kHeader;
    const size_t n = reinterpret_cast<size_t*>(block)[0];
    const size_t bytes = reinterpret_cast<size_t*>(block)[1];
    g_bytes.fetch_sub(static_cast<int64_t>(n), std::memory_order_relaxed);
    g_block_bytes.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    instance()->cache_.keep(block, bytes);
  }

  // A kept block of at least `bytes` (which becomes its size), else a new one; where that fails,
  // the kept blocks are freed and it is tried once more, so the cache never makes an allocation
  // fail.
  char* new_block(size_t& bytes) {
    if (void* kept = cache_.take(bytes, bytes)) return static_cast<char*>(kept);
    cache_.make_room(bytes, g_block_bytes.load(std::memory_order_relaxed));
    try {
      return static_cast<char*>(base_->raw_allocate(bytes));
    } catch (const c10::Error&) {
      cache_.clear();
      return static_cast<char*>(base_->raw_allocate(bytes));
    }
  }

  c10::Allocator* base_;
  c10::DeleterFnPtr base_free_;
  HostBlockCache cache_;
};

CountingAllocator* CountingAllocator::instance() {
  // Never destroyed: tensors of static lifetime may be freed after main returns.
  static auto* counting = new CountingAllocator(c10::GetCPUAllocator());
  return counting;
}

}  // namespace

void count_host_tensor_bytes() {
  static std::once_flag once;
  // The highest priority, so that no later registration replaces the counting allocator.
  std::call_once(once, [] { c10::SetCPUAllocator(CountingAllocator::instance(), UINT8_MAX); });
}

int64_t host_tensor_bytes() {
  return g_bytes.load(std::memory_order_relaxed);
}

int64_t host_tensor_peak_bytes() {
  return g_peak.load(std::memory_order_relaxed);
}

void trim_host_blocks() {
  CountingAllocator::instance()->cache().trim();
}

void release_host_blocks() {
  CountingAllocator::instance()->cache().clear();
}

int64_t idle_host_block_bytes() {
  return static_cast<int64_t>(CountingAllocator::instance()->cache().idle_bytes());
}

void reset_host_tensor_peak() {
  g_peak.store(host_tensor_bytes(), std::memory_order_relaxed);
}

}  // namespace adaqp
