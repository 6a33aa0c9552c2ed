#include "adaqp/model/torch_device.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>

namespace adaqp {

namespace {

template <typename T>
at::Tensor upload(const T* data, int64_t n, at::ScalarType type, const Device& device) {
  if (n == 0) return at::empty({0}, torch_options(device, type));
  const at::Tensor cpu = at::from_blob(const_cast<T*>(data), {n}, at::TensorOptions().dtype(type));
  return cpu.to(torch_device(device), /*non_blocking=*/false, /*copy=*/true);
}

template <typename T>
at::Tensor view_on(const T* data, int64_t n, at::ScalarType type, const Device& device) {
  if (n == 0) return at::empty({0}, torch_options(device, type));
  // to() is the tensor itself when it is already on `device`.
  return at::from_blob(const_cast<T*>(data), {n}, at::TensorOptions().dtype(type))
      .to(torch_device(device));
}

template <typename T>
at::Tensor upload(const std::vector<T>& host, at::ScalarType type, const Device& device) {
  return upload(host.data(), static_cast<int64_t>(host.size()), type, device);
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
  const auto index = static_cast<c10::DeviceIndex>(device.index);
  m.peak_allocated_bytes =
      at::accelerator::getDeviceStats(index)
          .allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
          .peak;
  const auto [free, total] = at::accelerator::getMemoryInfo(index);
  m.used_bytes = static_cast<int64_t>(total - free);
  return m;
}

void reset_device_peak(const Device& device) {
  if (device.is_cuda())
    at::accelerator::resetPeakStats(static_cast<c10::DeviceIndex>(device.index));
}

at::Tensor where_computed(const int64_t* data, int64_t n, const Device& device) {
  return view_on(data, n, at::kLong, device);
}

at::Tensor where_computed(const int32_t* data, int64_t n, const Device& device) {
  return view_on(data, n, at::kInt, device);
}

at::Tensor where_computed(const float* data, int64_t n, const Device& device) {
  return view_on(data, n, at::kFloat, device);
}

at::Tensor where_computed(const at::Tensor& host, const Device& device) {
  return host.to(torch_device(device));
}

at::Tensor to_device(const int64_t* data, int64_t n, const Device& device) {
  return upload(data, n, at::kLong, device);
}

at::Tensor to_device(const int32_t* data, int64_t n, const Device& device) {
  return upload(data, n, at::kInt, device);
}

at::Tensor to_device(const float* data, int64_t n, const Device& device) {
  return upload(data, n, at::kFloat, device);
}

at::Tensor to_device(const std::vector<int64_t>& host, const Device& device) {
  return upload(host, at::kLong, device);
}

at::Tensor to_device(const std::vector<int32_t>& host, const Device& device) {
  return upload(host, at::kInt, device);
}

at::Tensor to_device(const std::vector<uint8_t>& host, const Device& device) {
  return upload(host, at::kByte, device);
}

at::Tensor to_device(const std::vector<float>& host, const Device& device) {
  return upload(host, at::kFloat, device);
}

}  // namespace adaqp
