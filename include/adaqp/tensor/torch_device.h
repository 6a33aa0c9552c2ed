// Device (common/device.h) in libtorch's terms, and uploads of host arrays to it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>

#include <cstdint>
#include <vector>

#include "adaqp/common/device.h"

namespace adaqp {

c10::Device torch_device(const Device& device);
at::TensorOptions torch_options(const Device& device, at::ScalarType type);
// Where a tensor lives, as a Device.
Device tensor_device(const at::Tensor& t);

// Device memory (zeros on the CPU): the peak of libtorch's allocator (bytes allocated to tensors)
// since the last reset_device_peak, and the memory in use on the device now (total - free, as the
// driver reports it: every process's, contexts and cached blocks included).
struct DeviceMemory {
  int64_t peak_allocated_bytes = 0;
  int64_t used_bytes = 0;
};
DeviceMemory device_memory(const Device& device);
// True when libtorch's current stream on `device` is its default stream, the one every kernel and
// exchange of this runtime enqueues on (stream argument null); always true on the CPU.
bool computes_on_default_stream(const Device& device);
void reset_device_peak(const Device& device);

// A 1-d tensor of the n values at `data` where `device` computes: the host array itself on the CPU
// (a view: it must outlive the tensor), a copy on a GPU.
at::Tensor where_computed(const int64_t* data, int64_t n, const Device& device);
at::Tensor where_computed(const int32_t* data, int64_t n, const Device& device);
at::Tensor where_computed(const float* data, int64_t n, const Device& device);
// A host tensor where `device` computes: itself on the CPU, a copy on a GPU.
at::Tensor where_computed(const at::Tensor& host, const Device& device);

// A 1-d tensor on `device` holding a copy of `host` (n values at `data`).
at::Tensor to_device(const int64_t* data, int64_t n, const Device& device);
at::Tensor to_device(const int32_t* data, int64_t n, const Device& device);
at::Tensor to_device(const float* data, int64_t n, const Device& device);
at::Tensor to_device(const std::vector<int64_t>& host, const Device& device);
at::Tensor to_device(const std::vector<int32_t>& host, const Device& device);
at::Tensor to_device(const std::vector<uint8_t>& host, const Device& device);
at::Tensor to_device(const std::vector<float>& host, const Device& device);

}  // namespace adaqp
