// Peak memory of one rank, by phase of `adaqp train` (like time, memory decides whether a job can
// run at all): the resident set (VmHWM, common/memory.h), the bytes in host tensors
// (model/host_tensor_bytes.h) and, on CUDA, the peak of libtorch's device allocator (bytes
// allocated to tensors) and the device memory in use at the phase's end as the driver reports it
// (contexts and the allocator's cache included).
#pragma once

#include <array>
#include <cstdint>

#include "adaqp/common/device.h"

namespace adaqp {

// In the order they run: rank 0 loading and partitioning the dataset (when the partition does not
// exist yet; the others wait), every rank loading its part, start-up (graph blocks on the device,
// the feature cache's exchange, the link probe, the model), the training epochs.
enum class Phase { kPartition, kLoad, kStartup, kTraining };
constexpr int kPhases = 4;
// "partition", "load", "startup", "training".
const char* phase_name(Phase phase);

struct MemoryPeak {
  int64_t rss_bytes = 0;
  int64_t host_tensor_bytes = 0;  // 0 unless count_host_tensor_bytes() was called
  int64_t device_bytes = 0;       // CUDA: libtorch allocator's peak
  int64_t device_used_bytes = 0;  // CUDA: total - free at the end
};

// Every phase's peak, in Phase order.
using PhasePeaks = std::array<MemoryPeak, kPhases>;
// Every phase's wall time in seconds, in Phase order.
using PhaseSeconds = std::array<double, kPhases>;

// Measures one interval at a time: start() frees the large host blocks kept but not reused over an
// interval (trim_host_blocks) and resets the peaks, peak() reads them. The first meter
// of a process starts counting host tensors (count_host_tensor_bytes).
class MemoryMeter {
 public:
  explicit MemoryMeter(const Device& device = Device::cpu());
  void set_device(const Device& device) { device_ = device; }
  void start();
  MemoryPeak peak() const;
  // False when the kernel does not let the resident peak be reset: peaks then count from the
  // start of the process.
  bool resets() const { return resets_; }

 private:
  Device device_;
  bool resets_ = true;
};

}  // namespace adaqp
