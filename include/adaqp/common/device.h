// Where a worker computes: its CPU cores, or one CUDA device (training.device).
#pragma once

#include <string>

namespace adaqp {

struct Device {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int index = 0;  // CUDA device ordinal

  bool is_cuda() const { return kind == Kind::kCuda; }
  // "cpu" or "cuda:<index>".
  std::string name() const { return is_cuda() ? "cuda:" + std::to_string(index) : "cpu"; }

  static Device cpu() { return Device{}; }
  static Device cuda(int index) { return Device{Kind::kCuda, index}; }
};

}  // namespace adaqp
