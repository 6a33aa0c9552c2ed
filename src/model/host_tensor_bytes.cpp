#include "adaqp/model/host_tensor_bytes.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/alignment.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>

namespace adaqp {

namespace {

std::atomic<int64_t> g_bytes{0};
std::atomic<int64_t> g_peak{0};

void add(int64_t n) {
  const int64_t now = g_bytes.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Wraps libtorch's CPU allocator. Each block carries its size in a header of one alignment unit in
// front of the data, so the data stays aligned, the data pointer stays its own context (as
// raw_allocate and libtorch's simple data pointers require) and a free needs no lookup.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base), base_free_(base->raw_deleter()) {
    if (base_free_ == nullptr)
      throw std::logic_error("libtorch's CPU allocator has no raw deleter to count frees with");
  }

  c10::DataPtr allocate(size_t n) override {
    if (n == 0) return base_->allocate(0);
    auto* block = static_cast<char*>(base_->raw_allocate(n + kHeader));
    *reinterpret_cast<size_t*>(block) = n;
    add(static_cast<int64_t>(n));
    void* data = block + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  static CountingAllocator* instance();

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    base_->copy_data(dest, src, count);
  }

 private:
  static constexpr size_t kHeader = c10::gAlignment;

  static void release(void* data) {
    if (data == nullptr) return;
    char* block = static_cast<char*>(data) - kHeader;
    g_bytes.fetch_sub(static_cast<int64_t>(*reinterpret_cast<size_t*>(block)),
                      std::memory_order_relaxed);
    instance()->base_free_(block);
  }

  c10::Allocator* base_;
  c10::DeleterFnPtr base_free_;
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

void reset_host_tensor_peak() {
  g_peak.store(host_tensor_bytes(), std::memory_order_relaxed);
}

}  // namespace adaqp
