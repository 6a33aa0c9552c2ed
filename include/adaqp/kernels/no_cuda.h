// The dispatch of a kernel to a CUDA device in a build without CUDA: an error, never a skipped
// branch.
#pragma once

#include <string>

#include "adaqp/common/error.h"

namespace adaqp::kernels {

[[noreturn]] inline void no_cuda(const char* op) {
  throw ConfigError(std::string(op) + ": a CUDA device was given to a build without CUDA");
}

}  // namespace adaqp::kernels
