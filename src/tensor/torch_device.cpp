#include "adaqp/tensor/torch_device.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>

namespace adaqp {

namespace {

// The n values at `data` on `device`: a copy when `copy` (or on another device), else the host
// array itself where it already is (to() returns the tensor when nothing has to move).
template <typename T>
at::Tensor host_array(const T* data, int64_t n, at::ScalarType type, const Device& device,
                      bool copy) {
  if (n == 0) return at::empty({0}, torch_options(device, type));
  return at::from_blob(const_cast<T*>(data), {n}, at::TensorOptions().dtype(type))
      .to(torch_device(device), /*non_blocking=*/false, copy);
}

// The CUDA caching allocator sizes its per-device state when libtorch initialises CUDA, which
// happens on the first CUDA tensor; a query before that is "Invalid device argument".
c10::DeviceIndex initialised_cuda_index(const Device& device) {
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
  return static_cast<c10::DeviceIndex>(device.index);
}

}  // namespace

c10::Device torch_device(const Device& device) {
  return device.is_cuda() ? c10::Device(c10::DeviceType::CUDA, static_cast<int8_t>(device.index))
                          : c10::Device(c10::DeviceType::CPU);
}

at::TensorOptions torch_options(const Device& device, at::ScalarType type) {
  return at::TensorOptions().dtype(type).device(torch_device(device));
}

Device tensor_device(const at::Tensor& t) {
  return t.is_cuda() ? Device::cuda(t.get_device()) : Device::cpu();
}

DeviceMemory device_memory(const Device& device) {
  DeviceMemory m;
  if (!device.is_cuda()) return m;
  const auto index = initialised_cuda_index(device);
  m.peak_allocated_bytes =
      at::accelerator::getDeviceStats(index)
          .allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
          .peak;
  const auto [free, total] = at::accelerator::getMemoryInfo(index);
  m.used_bytes = static_cast<int64_t>(total - free);
  return m;
}

bool computes_on_default_stream(const Device& device) {
  if (!device.is_cuda()) return true;
  // Stream id 0 is the default stream of every device (c10's stream ids).
  return at::accelerator::getCurrentStream(initialised_cuda_index(device)).id() == 0;
}

void reset_device_peak(const Device& device) {
  if (device.is_cuda()) at::accelerator::resetPeakStats(initialised_cuda_index(device));
}

at::Tensor where_computed(const int64_t* data, int64_t n, const Device& device) {
  return host_array(data, n, at::kLong, device, /*copy=*/false);
}

at::Tensor where_computed(const int32_t* data, int64_t n, const Device& device) {
  return host_array(data, n, at::kInt, device, /*copy=*/false);
}

at::Tensor where_computed(const float* data, int64_t n, const Device& device) {
  return host_array(data, n, at::kFloat, device, /*copy=*/false);
}

at::Tensor where_computed(const at::Tensor& host, const Device& device) {
  return host.to(torch_device(device));
}

at::Tensor to_device(const int64_t* data, int64_t n, const Device& device) {
  return host_array(data, n, at::kLong, device, /*copy=*/true);
}

at::Tensor to_device(const int32_t* data, int64_t n, const Device& device) {
  return host_array(data, n, at::kInt, device, /*copy=*/true);
}

at::Tensor to_device(const float* data, int64_t n, const Device& device) {
  return host_array(data, n, at::kFloat, device, /*copy=*/true);
}

at::Tensor to_device(const std::vector<int64_t>& host, const Device& device) {
  return host_array(host.data(), static_cast<int64_t>(host.size()), at::kLong, device,
                    /*copy=*/true);
}

at::Tensor to_device(const std::vector<int32_t>& host, const Device& device) {
  return host_array(host.data(), static_cast<int64_t>(host.size()), at::kInt, device,
                    /*copy=*/true);
}

at::Tensor to_device(const std::vector<uint8_t>& host, const Device& device) {
  return host_array(host.data(), static_cast<int64_t>(host.size()), at::kByte, device,
                    /*copy=*/true);
}

at::Tensor to_device(const std::vector<float>& host, const Device& device) {
  return host_array(host.data(), static_cast<int64_t>(host.size()), at::kFloat, device,
                    /*copy=*/true);
}

}  // namespace adaqp
