// Test processes of a CUDA build load libtorch's CUDA backend before their first test
// (adaqp/tensor/torch_cuda_backend.h), with or without a GPU: the GPU tests' tensors need it, and a
// process that runs every test (the full sanitizer scope, --gtest_shuffle) would otherwise settle
// libtorch's CUDA answer in an earlier test (torch::manual_seed asks for the device count) before
// TorchCuda's tests load it. It costs those processes 0.15 s of CPU each.
#pragma once

#include "adaqp/config.h"
#include "adaqp/tensor/torch_cuda_backend.h"

namespace adaqp::test {

inline void load_torch_cuda_backend_in_cuda_builds() {
#if ADAQP_WITH_TORCH_CUDA
  load_torch_cuda_backend();
#endif
}

}  // namespace adaqp::test
