// libtorch's CUDA backend for the in-process layer tests, loaded before the first test in a CUDA
// build (torch_cuda_setup.h).
#include <gtest/gtest.h>

#include "torch_cuda_setup.h"

namespace adaqp::test {
namespace {

class TorchCudaEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { load_torch_cuda_backend_in_cuda_builds(); }
};

[[maybe_unused]] ::testing::Environment* const kTorchCudaEnvironment =
    ::testing::AddGlobalTestEnvironment(new TorchCudaEnvironment);

}  // namespace
}  // namespace adaqp::test
