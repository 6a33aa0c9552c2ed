// libtorch's CUDA backend in a CUDA build: loading libtorch_cuda at run time must register it (no
// GPU needed), and tensors must round-trip through the GPU when one is visible. Skipped, with the
// reason, in builds without libtorch's CUDA libraries or without a GPU.
#include <ATen/detail/CUDAHooksInterface.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include <string>

#include "adaqp/common/error.h"
#include "adaqp/config.h"
#include "adaqp/tensor/torch_cuda_backend.h"
#include "subnormals.h"

namespace adaqp {
namespace {

// On the H200 machine of 2026-12-04 both subnormal checks below passed while the CPU codec computed
// subnormal steps as 0 in the same process (cuda/GPU-CHECKLIST.md).
TEST(TorchCuda, BackendIsRegisteredOnceLoaded) {
#if ADAQP_WITH_TORCH_CUDA
  load_torch_cuda_backend();
  load_torch_cuda_backend();  // a second call returns at once
  // The hooks stub that libtorch_cpu installs throws here; libtorch_cuda's returns its version.
  EXPECT_GE(at::detail::getCUDAHooks().versionCUDART(), 12000);
  EXPECT_TRUE(test::subnormals_kept())
      << "after loading libtorch_cuda: " << test::subnormal_report();
  // And the dispatcher has the CUDA kernels: a CUDA tensor is made, or refused for want of a
  // device or driver; without the backend it is refused for want of a kernel ("Could not run").
  try {
    EXPECT_EQ(torch::empty({4}, torch::kCUDA).numel(), 4);
  } catch (const c10::Error& e) {
    EXPECT_EQ(std::string(e.what_without_backtrace()).find("Could not run"), std::string::npos)
        << e.what_without_backtrace();
  }
#else
  EXPECT_THROW(load_torch_cuda_backend(), ConfigError);
  GTEST_SKIP() << "built without libtorch's CUDA libraries (ADAQP_WITH_TORCH_CUDA=0)";
#endif
}

// A suite of its own: it skips without a GPU, and a suite that skips a test shows as skipped.
TEST(TorchCudaDevice, TensorRoundTripsThroughDevice) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to libtorch";
  const torch::Tensor x = torch::arange(1000, torch::kFloat32);
  const torch::Tensor y = (x.to(torch::kCUDA) * 2.0f + 1.0f).to(torch::kCPU);
  EXPECT_TRUE(torch::equal(y, x * 2.0f + 1.0f));
  EXPECT_TRUE(test::subnormals_kept()) << "after CUDA started: " << test::subnormal_report();
}

}  // namespace
}  // namespace adaqp
