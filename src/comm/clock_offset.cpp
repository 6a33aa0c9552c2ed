#include "adaqp/comm/clock_offset.h"

#include <string>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

constexpr int kClockTag = 32763;

// Sends `out` to peer and receives `in` from it (either may be null), then waits.
void transfer(Communicator& comm, int peer, const double* out, double* in) {
  ExchangeBuffers b = ExchangeBuffers::none(comm.size());
  if (out != nullptr) {
    b.send[peer] = out;
    b.send_bytes[peer] = sizeof(double);
  }
  if (in != nullptr) {
    b.recv[peer] = in;
    b.recv_bytes[peer] = sizeof(double);
  }
  comm.exchange(b, {kClockTag})->wait();
}

}  // namespace

double clock_offset(const std::vector<ClockSample>& samples) {
  ADAQP_CHECK(!samples.empty(), "clock offset: no samples");
  size_t best = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const ClockSample& s = samples[i];
    ADAQP_CHECK(s.received_s >= s.sent_s, "clock offset: sample " + std::to_string(i) +
                                              " received at " + std::to_string(s.received_s) +
                                              " before it was sent at " + std::to_string(s.sent_s));
    const ClockSample& b = samples[best];
    if (s.received_s - s.sent_s < b.received_s - b.sent_s) best = i;
  }
  const ClockSample& s = samples[best];
  return s.remote_s - (s.sent_s + s.received_s) / 2;
}

double estimate_clock_offset(Communicator& comm, int rounds) {
  ADAQP_CHECK_GE(rounds, 1, "clock offset: rounds");
  const int rank = comm.rank();
  if (rank == 0) {
    for (int peer = 1; peer < comm.size(); ++peer) {
      for (int k = 0; k < rounds; ++k) {
        double ping = 0;
        transfer(comm, peer, nullptr, &ping);
        const double now = steady_now_s();
        transfer(comm, peer, &now, nullptr);
      }
    }
    return 0;
  }
  std::vector<ClockSample> samples(static_cast<size_t>(rounds));
  for (ClockSample& s : samples) {
    s.sent_s = steady_now_s();
    transfer(comm, 0, &s.sent_s, nullptr);
    transfer(comm, 0, nullptr, &s.remote_s);
    s.received_s = steady_now_s();
  }
  return clock_offset(samples);
}

}  // namespace adaqp
