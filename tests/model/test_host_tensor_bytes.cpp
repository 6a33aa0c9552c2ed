// The count of host tensor bytes (model/host_tensor_bytes.h): every allocation through libtorch's
// CPU allocator adds its size exactly, every free takes it back, the peak holds the largest sum
// since its reset, and tensors made through the counting allocator still compute and free like any
// other (raw allocations included). The count is process-wide: nothing else in this test binary
// allocates host tensors while a test runs.
#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <limits>

#include "adaqp/model/host_tensor_bytes.h"

namespace adaqp {
namespace {

TEST(HostTensorBytes, CountsEveryAllocationAndFreeExactly) {
  count_host_tensor_bytes();
  count_host_tensor_bytes();  // a second call must not wrap the allocator twice
  const int64_t before = host_tensor_bytes();
  reset_host_tensor_peak();
  {
    at::Tensor a = at::ones({1000}, at::kFloat);
    EXPECT_EQ(host_tensor_bytes(), before + 4000);
    {
      at::Tensor b = at::empty({3, 7}, at::kDouble);
      EXPECT_EQ(host_tensor_bytes(), before + 4000 + 168);
    }
    EXPECT_EQ(host_tensor_bytes(), before + 4000);
    EXPECT_EQ(host_tensor_peak_bytes(), before + 4168);
    at::Tensor sum = a + a;  // an operator's output is counted too
    EXPECT_EQ(host_tensor_bytes(), before + 8000);
    EXPECT_EQ(sum.sum().item<float>(), 2000.0f);
    reset_host_tensor_peak();
    EXPECT_EQ(host_tensor_peak_bytes(), before + 8000);
  }
  EXPECT_EQ(host_tensor_bytes(), before);
  EXPECT_EQ(host_tensor_peak_bytes(), before + 8000);
}

TEST(HostTensorBytes, RawAllocationsAndMatrixProductsWork) {
  count_host_tensor_bytes();
  const int64_t before = host_tensor_bytes();
  c10::Allocator* allocator = c10::GetCPUAllocator();
  void* raw = allocator->raw_allocate(100);
  ASSERT_NE(raw, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(raw) % 64, 0u) << "data must keep libtorch's alignment";
  EXPECT_EQ(host_tensor_bytes(), before + 100);
  allocator->raw_deallocate(raw);
  EXPECT_EQ(host_tensor_bytes(), before);

  const at::Tensor x = at::arange(12, at::kFloat).reshape({3, 4});
  const at::Tensor y = at::matmul(x, x.t()).contiguous();
  EXPECT_EQ(y[1][2].item<float>(), 4 * 8 + 5 * 9 + 6 * 10 + 7 * 11);
  at::Tensor grown = at::zeros({2}, at::kFloat);
  grown.resize_({4096});  // a storage that grows in place reallocates through the allocator
  EXPECT_EQ(host_tensor_bytes(), before + x.nbytes() + y.nbytes() + 4096 * 4);
}

// Sizes that a header and the rounding to whole MiB would wrap around (a negative byte count
// reaching the allocator, say) are refused as libtorch's own allocator refuses them: an error, no
// block too small for the pointer handed out, nothing counted.
TEST(HostTensorBytes, ASizeTooLargeForTheHeaderIsRefused) {
  count_host_tensor_bytes();
  const int64_t before = host_tensor_bytes();
  c10::Allocator* allocator = c10::GetCPUAllocator();
  const size_t largest = std::numeric_limits<size_t>::max();
  for (const size_t n : {largest - 8, largest - (size_t{1} << 19), largest / 2 + 1})
    EXPECT_THROW(allocator->allocate(n), c10::Error) << n << " bytes";
  EXPECT_EQ(host_tensor_bytes(), before);
}

}  // namespace
}  // namespace adaqp
