#include "adaqp/common/wait_bound.h"

#include <time.h>

#include <algorithm>

#include "adaqp/common/clock.h"

namespace adaqp {
namespace {

constexpr double kCpuReadEveryS = 0.1;  // a read costs a system call (about 0.2 us)

double thread_cpu_s() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

WaitBound::WaitBound(double seconds)
    : looked_s_(steady_now_s()), cpu_s_(thread_cpu_s()), cpu_read_s_(looked_s_) {
  end_s_ = looked_s_ + seconds;
}

bool WaitBound::passed() {
  const double now = steady_now_s();
  if (now - looked_s_ > kOwnPauseS) {
    // The CPU time since the last read, up to kCpuReadEveryS more than the gap's own.
    const double cpu = thread_cpu_s();
    end_s_ += std::max(0.0, (now - looked_s_) - (cpu - cpu_s_));
    cpu_s_ = cpu;
    cpu_read_s_ = now;
  } else if (now - cpu_read_s_ > kCpuReadEveryS) {
    cpu_s_ = thread_cpu_s();
    cpu_read_s_ = now;
  }
  looked_s_ = now;
  return now > end_s_;
}

}  // namespace adaqp
