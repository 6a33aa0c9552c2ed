// The one clock of every timestamp and host-side duration: the process's steady clock, in seconds.
#pragma once

#include <chrono>

namespace adaqp {

inline double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace adaqp
