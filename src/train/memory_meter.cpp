#include "adaqp/train/memory_meter.h"

#include "adaqp/common/memory.h"
#include "adaqp/model/host_tensor_bytes.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::kPartition:
      return "partition";
    case Phase::kLoad:
      return "load";
    case Phase::kStartup:
      return "startup";
    case Phase::kTraining:
      return "training";
  }
  return "?";
}

MemoryMeter::MemoryMeter(const Device& device) : device_(device) {
  count_host_tensor_bytes();
}

void MemoryMeter::start() {
  // Kept blocks that a whole interval did not reuse go before the peak is reset: what stays idle
  // into this interval is the last one's turnover, which an epoch like it takes again.
  trim_host_blocks();
  resets_ = reset_peak_rss() && resets_;
  reset_host_tensor_peak();
  reset_device_peak(device_);
}

MemoryPeak MemoryMeter::peak() const {
  MemoryPeak p;
  p.rss_bytes = peak_rss_bytes();
  p.host_tensor_bytes = host_tensor_peak_bytes();
  const DeviceMemory d = device_memory(device_);
  p.device_bytes = d.peak_allocated_bytes;
  p.device_used_bytes = d.used_bytes;
  return p;
}

}  // namespace adaqp
