// The duration of intervals of work, measured where the work runs: host wall time on the CPU,
// CUDA events on a stream of the device (the host enqueues device work and runs ahead, so its own
// clock measures nothing there). Device intervals are read once their work has completed. A CUDA
// timer in a build without CUDA is an error.
#pragma once

#include <memory>
#include <vector>

#include "adaqp/common/device.h"

namespace adaqp::kernels {

class StreamTimer {
 public:
  explicit StreamTimer(const Device& device = Device::cpu());
  ~StreamTimer();
  StreamTimer(StreamTimer&&) noexcept;
  StreamTimer& operator=(StreamTimer&&) noexcept;

  // Marks the start and the end of an interval of the work enqueued on `stream` (a cudaStream_t;
  // ignored on the CPU, where the interval is the host's time between the two calls).
  void start(void* stream = nullptr);
  void stop(void* stream = nullptr);
  // Seconds of every interval since the last reset; on a device, waits for the last one's work.
  // InvariantError for a start inside an interval, a stop outside one, or seconds inside one.
  double seconds();
  void reset();

 private:
  struct Events;
  Device device_;
  double total_s_ = 0;
  double started_s_ = 0;
  bool open_ = false;               // CPU: between start and stop
  std::unique_ptr<Events> events_;  // CUDA: start/stop event pairs, reused across resets
};

}  // namespace adaqp::kernels
