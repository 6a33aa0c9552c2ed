// The CUDA runtime as the rest of the project sees it, without CUDA types: device selection,
// events on streams (cudaStream_t passed as void*; nullptr is the legacy default stream, the one
// libtorch computes on) and copies; implemented in cuda/device.cu over cuda_support.h. Exists only
// when ADAQP_WITH_CUDA is 1; every failure is a CudaError naming the call.
#pragma once

#include "adaqp/config.h"

#if ADAQP_WITH_CUDA

#include <cstddef>
#include <memory>
#include <string>

namespace adaqp::cuda {
class Event;
}

namespace adaqp::kernels {

// Number of visible CUDA devices; 0 when there is no driver or device, and then `why` (when given)
// holds why: no driver on the host, or what the runtime said (e.g. a driver older than this
// build's CUDA runtime).
int cuda_device_count(std::string* why = nullptr);
// Makes `device` current for the calling thread.
void cuda_set_device(int device);
// The device's UUID (32 hex digits): the same physical GPU gives the same text in every process,
// whatever CUDA_VISIBLE_DEVICES numbers it as.
std::string cuda_device_uuid(int device);

// An event on the current device (cuda_support.h's, behind an opaque stream). Timing events
// measure intervals between two of them.
class CudaEvent {
 public:
  explicit CudaEvent(bool timing = true);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  // Captures the work enqueued on `stream` so far.
  void record(void* stream);
  // Makes work enqueued later on `stream` wait for the captured work (no host wait).
  void block(void* stream) const;
  // True once the captured work has completed (never blocks).
  bool query() const;
  // Blocks the host until the captured work has completed.
  void synchronize() const;
  // Seconds from `start` to this event; both recorded with timing and completed.
  double seconds_since(const CudaEvent& start) const;

 private:
  std::unique_ptr<cuda::Event> event_;
};

// Asynchronous copy of `bytes` between any two of host, pinned host and device memory on `stream`.
void cuda_copy_async(void* dst, const void* src, size_t bytes, void* stream);
// Blocks the host until every kernel and copy enqueued so far on `device` has completed.
void cuda_synchronize(int device);
// Fills `bytes` bytes of device memory with `value` on `stream`.
void cuda_memset_async(void* dst, int value, size_t bytes, void* stream);

}  // namespace adaqp::kernels

#endif  // ADAQP_WITH_CUDA
