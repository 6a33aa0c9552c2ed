#include "adaqp/kernels/stream_timer.h"

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/config.h"
#include "adaqp/kernels/no_cuda.h"
#if ADAQP_WITH_CUDA
#include "adaqp/kernels/cuda_device.h"
#endif

namespace adaqp::kernels {

struct StreamTimer::Events {
#if ADAQP_WITH_CUDA
  std::vector<std::unique_ptr<CudaEvent>> events;  // start, stop, start, stop, ...
  size_t used = 0;                                 // events recorded since the last read
#endif
};

StreamTimer::StreamTimer(const Device& device)
    : device_(device), events_(std::make_unique<Events>()) {
  if (device.is_cuda() && !ADAQP_WITH_CUDA) no_cuda("StreamTimer");
}

StreamTimer::~StreamTimer() = default;
StreamTimer::StreamTimer(StreamTimer&&) noexcept = default;
StreamTimer& StreamTimer::operator=(StreamTimer&&) noexcept = default;

void StreamTimer::start(void* stream) {
#if ADAQP_WITH_CUDA
  if (device_.is_cuda()) {
    ADAQP_CHECK(events_->used % 2 == 0, "StreamTimer::start twice");
    if (events_->events.size() < events_->used + 2) {
      events_->events.push_back(std::make_unique<CudaEvent>());
      events_->events.push_back(std::make_unique<CudaEvent>());
    }
    events_->events[events_->used++]->record(stream);
    return;
  }
#endif
  (void)stream;
  ADAQP_CHECK(!open_, "StreamTimer::start twice");
  open_ = true;
  started_s_ = steady_now_s();
}

void StreamTimer::stop(void* stream) {
#if ADAQP_WITH_CUDA
  if (device_.is_cuda()) {
    ADAQP_CHECK(events_->used % 2 == 1, "StreamTimer::stop without start");
    events_->events[events_->used++]->record(stream);
    return;
  }
#endif
  (void)stream;
  ADAQP_CHECK(open_, "StreamTimer::stop without start");
  open_ = false;
  total_s_ += steady_now_s() - started_s_;
}

double StreamTimer::seconds() {
#if ADAQP_WITH_CUDA
  if (device_.is_cuda() && events_->used > 0) {
    ADAQP_CHECK(events_->used % 2 == 0, "StreamTimer::seconds inside an interval");
    for (size_t k = 0; k < events_->used; k += 2) {
      events_->events[k + 1]->synchronize();
      total_s_ += events_->events[k + 1]->seconds_since(*events_->events[k]);
    }
    events_->used = 0;
  }
#endif
  ADAQP_CHECK(!open_, "StreamTimer::seconds inside an interval");
  return total_s_;
}

void StreamTimer::reset() {
  total_s_ = 0;
  open_ = false;
#if ADAQP_WITH_CUDA
  events_->used = 0;
#endif
}

}  // namespace adaqp::kernels
