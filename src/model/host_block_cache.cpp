#include "adaqp/model/host_block_cache.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <new>

namespace adaqp {

size_t HostBlockCache::block_bytes(size_t bytes) {
  if (bytes < kMinBytes) return bytes;
  constexpr size_t kMiB = size_t{1} << 20;
  return (bytes + kMiB - 1) / kMiB * kMiB;
}

void* HostBlockCache::take(size_t block, size_t& taken) {
  if (block < kMinBytes) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  // The smallest kept block that holds the request with at most a quarter to spare; the most
  // recently kept among equals: its pages are the likeliest to be in the caches still.
  const size_t most = block + block / 4;
  auto best = kept_.rend();
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    if (it->bytes < block || it->bytes > most) continue;
    if (best == kept_.rend() || it->bytes < best->bytes) best = it;
    if (best->bytes == block) break;
  }
  if (best == kept_.rend()) return nullptr;
  void* data = best->data;
  taken = best->bytes;
  idle_ -= taken;
  kept_.erase(std::next(best).base());
  return data;
}

void HostBlockCache::make_room(size_t block, int64_t live_bytes) {
  if (block < kMinBytes) return;
  std::vector<void*> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    released.reserve(kept_.size());  // before idle_ changes: it must stay the kept blocks' sum
    const size_t wanted = static_cast<size_t>(std::max<int64_t>(live_bytes, 0)) + block;
    peak_ = std::max(peak_, wanted);
    const size_t bound = peak_ + std::max(peak_ / 16, kSlackBytes);
    size_t oldest = 0;
    for (; oldest < kept_.size() && wanted + idle_ > bound; ++oldest) {
      idle_ -= kept_[oldest].bytes;
      released.push_back(kept_[oldest].data);
    }
    kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(oldest));
  }
  release_all(released);
}

void HostBlockCache::keep(void* data, size_t block) {
  if (block < kMinBytes) {
    release_(data);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    kept_.push_back({data, block, generation_});
  } catch (const std::bad_alloc&) {
    release_(data);  // a tensor's deleter must not throw
    return;
  }
  idle_ += block;
}

void HostBlockCache::trim() {
  uint64_t previous = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    previous = generation_++;
  }
  release_older(previous);
}

void HostBlockCache::clear() {
  release_older(std::numeric_limits<uint64_t>::max());
}

void HostBlockCache::release_older(uint64_t generation) {
  std::vector<void*> released;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Kept> stay;
    stay.reserve(kept_.size());  // before idle_ changes, as in make_room
    released.reserve(kept_.size());
    for (const Kept& k : kept_) {
      if (k.generation < generation) {
        released.push_back(k.data);
        idle_ -= k.bytes;
      } else {
        stay.push_back(k);
      }
    }
    kept_.swap(stay);
  }
  release_all(released);
}

void HostBlockCache::release_all(const std::vector<void*>& blocks) const {
  for (void* p : blocks) release_(p);
}

size_t HostBlockCache::idle_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_;
}

}  // namespace adaqp
