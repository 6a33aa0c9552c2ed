// Offsets between the ranks' steady clocks, so that timestamps taken on different ranks can be
// compared: e.g. when the last rank started a halo exchange (assign/adaptive_policy.h measures
// every exchange from that moment). Ranks on one host share the clock (offsets about 0); on a
// cluster each host's steady clock has its own origin.
#pragma once

#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/common/clock.h"

namespace adaqp {

// One ping-pong with a reference rank: this rank's clock when it sent its ping and when the reply
// arrived, and the reference clock when it replied.
struct ClockSample {
  double sent_s = 0;
  double remote_s = 0;
  double received_s = 0;
};

// The offset to add to this rank's clock to read the reference clock: remote - (sent + received)
// / 2 of the sample with the shortest round trip (ties: the first), whose error is at most half
// that round trip. InvariantError if there are no samples or one has received < sent.
double clock_offset(const std::vector<ClockSample>& samples);

// Collective: this rank's offset to rank 0's steady clock (0 on rank 0), from `rounds` >= 1
// ping-pongs between rank 0 and each other rank in turn (point-to-point, tag 32763).
double estimate_clock_offset(Communicator& comm, int rounds = 16);

}  // namespace adaqp
