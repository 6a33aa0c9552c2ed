// libtorch's CUDA backend in a CUDA build: libtorch_cuda must be linked (and so registered) even
// though nothing calls it directly, and tensors must round-trip through the GPU when one is
// visible. Skipped, with the reason, in builds without libtorch's CUDA libraries or without a GPU.
#include <ATen/detail/CUDAHooksInterface.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "adaqp/config.h"

namespace adaqp {
namespace {

TEST(TorchCuda, BackendIsRegistered) {
#if ADAQP_WITH_TORCH_CUDA
  // The hooks stub that libtorch_cpu installs throws here; libtorch_cuda's returns its version.
  EXPECT_GE(at::detail::getCUDAHooks().versionCUDART(), 12000);
#else
  GTEST_SKIP() << "built without libtorch's CUDA libraries (ADAQP_WITH_TORCH_CUDA=0)";
#endif
}

TEST(TorchCuda, TensorRoundTripsThroughDevice) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible to libtorch";
  const torch::Tensor x = torch::arange(1000, torch::kFloat32);
  const torch::Tensor y = (x.to(torch::kCUDA) * 2.0f + 1.0f).to(torch::kCPU);
  EXPECT_TRUE(torch::equal(y, x * 2.0f + 1.0f));
}

}  // namespace
}  // namespace adaqp
