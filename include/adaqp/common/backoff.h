// Polling pause for loops that wait on asynchronous transfers: yields for the first polls (low
// latency), then sleeps with a doubling pause up to a cap (leaves the cores to the computation).
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace adaqp {

class Backoff {
 public:
  Backoff(int spins, std::chrono::microseconds min_sleep, std::chrono::microseconds max_sleep)
      : spins_left_(spins), min_sleep_(min_sleep), max_sleep_(max_sleep) {}

  void pause() {
    if (spins_left_ > 0) {
      --spins_left_;
      std::this_thread::yield();
      return;
    }
    sleep_ = std::min(std::max(sleep_ * 2, min_sleep_), max_sleep_);
    std::this_thread::sleep_for(sleep_);
  }

 private:
  int spins_left_;
  std::chrono::microseconds min_sleep_, max_sleep_;
  std::chrono::microseconds sleep_{0};
};

}  // namespace adaqp
