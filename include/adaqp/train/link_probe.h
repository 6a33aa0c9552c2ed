// The exchange cost model of the adaptive scheme (docs/design.md, section 6), measured at start-up
// on the exchange schedule the runtime really uses.
//
// Why one channel per sender: the halo exchanger posts every receive, then packs and posts every
// peer's block at once, so all links of a rank run concurrently and share that rank's outgoing
// bandwidth (its NIC uplink; the sending process on shared memory). A per-link line fitted under
// that schedule would charge every link the whole rank's bandwidth and mispredict as soon as the
// split between peers changes. So a probe sends every peer a block proportional to the job's real
// message count to that peer, all ranks at once, and each sender's time runs from the moment the
// last rank started the probe until its last block arrived (the receivers time their arrivals;
// the ranks' clocks are aligned to rank 0's, clock_offset.h; every rank learns all of them): the
// same definition as the runtime's measured exchange time (AssignStats::measured_*). The fit
// (assign::fit_link: median of the repeats of each size, line on relative errors) is
// t_s = alpha_s + beta_s * (bytes rank s sent). The exchange then ends when the slowest sender
// does, which is the time model the solver plans with (assign::per_sender_time_model).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/assign/link_fit.h"
#include "adaqp/assign/time_model.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/common/device.h"
#include "adaqp/partition/boundary.h"

namespace adaqp {

struct LinkProbeOptions {
  // Bytes of one message (row) to probe between: the job's smallest and largest quantized rows.
  int64_t min_row_bytes = 12;
  int64_t max_row_bytes = 264;
  // Probe sizes per pass (assign::probe_sizes, >= 2): few, so that the budget reaches the large
  // exchanges; the repeats give each its median.
  int sizes = 8;
  int repeats = 7;  // passes over the sizes at most; >= 3 (a median per size)
  // The whole probe (host discovery, clock alignment, warm-up, passes) ends within about this:
  // passes are priced by the warm-up's wall time and then by the last pass; the largest size
  // shrinks until the 3 passes due fit, and after them the probe stops before a pass that would
  // end past it. What can still overrun it: the warm-up (4 small probes per link class) and 3
  // passes at twice the smallest size, which a median needs.
  double budget_s = 1.0;
  // Where the probe's buffers live: the job's device (device memory for a device transport).
  Device device;
};

struct LinkModel {
  // 1: one channel per sender; 2 (assign::kLinkClasses): per sender, one to the ranks of its host
  // and one to the other hosts' ranks (assign::per_sender_class_time_model).
  int classes = 1;
  std::vector<assign::LinkFit> fits;    // per channel of `time` (classes * sender + class)
  std::vector<assign::LinkCost> costs;  // the costs planned with (see probe_link_model)
  assign::TimeModel time;
  int64_t min_bytes = 0, max_bytes = 0;  // range of the senders' probe volumes
  double probe_time_s = 0;               // wall time of the probe (0: costs given, not probed)
};

// Probes and fits every sender's cost (collective; every rank returns the same model, computed from
// the same gathered samples). Links of two speeds: where some messages stay on a host and others
// leave it (comm/host_of.h), each class is probed on its own (its peers only, half the time left
// each) and fitted, so that a rank's shared-memory peers and its network peers get their own lines:
// per sender on the host, per host between hosts (the ranks of a host share its network link: the
// host's line through all their bytes, each rank planning at the host's slope times the number of
// its ranks that send to other hosts); otherwise one line per sender as above. A fit whose slope is
// not positive (noise over too narrow a range) is planned with the largest positive slope of the
// other senders of its class (or 1 ns/byte if none has one) and a warning; a negative intercept is
// planned as 0.
LinkModel probe_link_model(Communicator& comm, const Boundary& boundary,
                           const LinkProbeOptions& opt);

// A model from given per-sender costs (no probing): reproducible plans, e.g. in tests.
LinkModel fixed_link_model(const std::vector<assign::LinkCost>& costs);

}  // namespace adaqp
