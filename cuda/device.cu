#include <cuda_runtime.h>

#include <dlfcn.h>

#include "adaqp/kernels/cuda_device.h"
#include "adaqp/kernels/cuda_support.h"

namespace adaqp::kernels {

int cuda_device_count(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    // The runtime says "driver version is insufficient" also where there is no driver at all.
    void* driver =
        err == cudaErrorInsufficientDriver ? ::dlopen("libcuda.so.1", RTLD_LAZY) : nullptr;
    const bool no_driver = err == cudaErrorInsufficientDriver && driver == nullptr;
    if (driver != nullptr) ::dlclose(driver);
    if (why != nullptr) {
      *why = no_driver ? "no NVIDIA driver on this host: the CUDA runtime reports "
                         "cudaErrorInsufficientDriver and libcuda.so.1 cannot be loaded"
                       : std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    }
    return 0;
  }
  if (why != nullptr) why->clear();
  return count;
}

void cuda_set_device(int device) {
  ADAQP_CUDA_CHECK(cudaSetDevice(device));
}

std::string cuda_device_uuid(int device) {
  cudaDeviceProp prop;
  ADAQP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  static const char* kHex = "0123456789abcdef";
  std::string text;
  for (char byte : prop.uuid.bytes) {
    const auto b = static_cast<unsigned char>(byte);
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  return text;
}

CudaEvent::CudaEvent(bool timing) : event_(std::make_unique<cuda::Event>(timing)) {}

CudaEvent::~CudaEvent() = default;

void CudaEvent::record(void* stream) {
  event_->record(static_cast<cudaStream_t>(stream));
}

void CudaEvent::block(void* stream) const {
  event_->block(static_cast<cudaStream_t>(stream));
}

bool CudaEvent::query() const {
  return event_->query();
}

void CudaEvent::synchronize() const {
  event_->synchronize();
}

double CudaEvent::seconds_since(const CudaEvent& start) const {
  return event_->seconds_since(*start.event_);
}

void cuda_copy_async(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return;
  ADAQP_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
}

void cuda_synchronize(int device) {
  cuda::DeviceGuard guard(device);
  ADAQP_CUDA_CHECK(cudaDeviceSynchronize());
}

void cuda_memset_async(void* dst, int value, size_t bytes, void* stream) {
  if (bytes == 0) return;
  ADAQP_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)));
}

}  // namespace adaqp::kernels
