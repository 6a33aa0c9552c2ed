// The CUDA runtime for the code that sees CUDA types (cuda/*.cu, the NCCL communicator, the GPU
// tests and benchmarks): the one check of a runtime call, and owners of a stream, an event, device
// memory and the current device. Every failure is a CudaError "<call> failed[ <where>]: <error>".
// Code that must not see CUDA types uses cuda_device.h (opaque streams and events), built on this.
// Include only where ADAQP_WITH_CUDA is 1.
#pragma once

#include "adaqp/config.h"

#if !ADAQP_WITH_CUDA
#error "cuda_support.h is for CUDA builds only; code of every build uses kernels/cuda_device.h"
#endif

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp::cuda {

// Throws CudaError naming the call, `where` (e.g. "on rank 3 (device 1)") and CUDA's message.
inline void check(cudaError_t err, const char* call, const std::string& where = "") {
  if (err == cudaSuccess) return;
  throw CudaError(std::string(call) + " failed" + (where.empty() ? "" : " " + where) + ": " +
                  cudaGetErrorString(err));
}

}  // namespace adaqp::cuda

#define ADAQP_CUDA_CHECK(call) ::adaqp::cuda::check((call), #call)
#define ADAQP_CUDA_CHECK_AT(call, where) ::adaqp::cuda::check((call), #call, (where))

namespace adaqp::cuda {

// A stream of the current device (non-blocking: no implicit order with the legacy stream).
class Stream {
 public:
  explicit Stream(const std::string& where = "") {
    ADAQP_CUDA_CHECK_AT(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), where);
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event of the current device; a timing event measures intervals to another one.
class Event {
 public:
  explicit Event(bool timing = false, const std::string& where = "") {
    ADAQP_CUDA_CHECK_AT(
        cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
        where);
  }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

  // Captures the work enqueued on `stream` so far.
  void record(cudaStream_t stream) { ADAQP_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  // Work enqueued later on `stream` waits for the captured work (no host wait).
  void block(cudaStream_t stream) const {
    ADAQP_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0));
  }
  // True once the captured work has completed (never blocks).
  bool query() const {
    const cudaError_t err = cudaEventQuery(event_);
    if (err == cudaErrorNotReady) return false;
    ADAQP_CUDA_CHECK(err);
    return true;
  }
  void synchronize() const { ADAQP_CUDA_CHECK(cudaEventSynchronize(event_)); }
  // Seconds from `start` to this event; both recorded with timing and completed.
  double seconds_since(const Event& start) const {
    float ms = 0;
    ADAQP_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

// Blocks of a grid-stride launch over `items` items, `per_block` a block: at least 1 (a launch of
// none is an error, cudaErrorInvalidConfiguration) and at most 65535 (the kernels loop over what
// one launch's grid does not cover).
inline unsigned grid_blocks(int64_t items, int64_t per_block) {
  const int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks < 65535 ? blocks : 65535);
}

// `count` elements of T in device memory of the current device (at least one byte allocated).
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count, const std::string& where = "") : count_(count) {
    void* p = nullptr;
    ADAQP_CUDA_CHECK_AT(cudaMalloc(&p, count == 0 ? 1 : count * sizeof(T)), where);
    ptr_ = static_cast<T*>(p);
  }
  // A copy of `host` in device memory.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    upload(host.data());
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return ptr_; }
  size_t count() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }
  // Copies bytes() bytes from `host` (waits for the device).
  void upload(const void* host) {
    ADAQP_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes(), cudaMemcpyHostToDevice));
  }
  // The elements, copied to the host (waits for the device).
  std::vector<T> download() const {
    std::vector<T> host(count_);
    ADAQP_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// Makes `device` current for a scope and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device, const std::string& where = "") : device_(device) {
    ADAQP_CUDA_CHECK_AT(cudaGetDevice(&previous_), where);
    if (previous_ != device_) ADAQP_CUDA_CHECK_AT(cudaSetDevice(device_), where);
  }
  ~DeviceGuard() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

}  // namespace adaqp::cuda
