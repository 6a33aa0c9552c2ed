// The Work of a host transport (MPI, threads): the transport records the exchange's timing
// (communicator.h: ExchangeTiming) as the exchange progresses, and timing() returns it as it is.
#pragma once

#include <cstddef>

#include "adaqp/comm/communicator.h"

namespace adaqp {

class HostWork : public Work {
 public:
  ExchangeTiming timing() override { return timing_; }

 protected:
  // Every one of the `world` ranks' arrivals starts at -1 (nothing arrived yet).
  explicit HostWork(int world) { timing_.arrival_s.assign(static_cast<size_t>(world), -1.0); }

  ExchangeTiming timing_;
};

}  // namespace adaqp
