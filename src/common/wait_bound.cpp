#include "adaqp/common/wait_bound.h"

#include "adaqp/common/clock.h"

namespace adaqp {

WaitBound::WaitBound(double seconds) : looked_s_(steady_now_s()) {
  end_s_ = looked_s_ + seconds;
}

bool WaitBound::passed() {
  const double now = steady_now_s();
  if (now - looked_s_ > kOwnPauseS) end_s_ += now - looked_s_;
  looked_s_ = now;
  return now > end_s_;
}

}  // namespace adaqp
