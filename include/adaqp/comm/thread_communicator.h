// An in-process transport for tests: W ranks as W threads of one process, each with its own
// Communicator over a shared ThreadWorld (mailboxes, collective slots). It keeps the whole
// Communicator contract with host memory (grouped exchanges with their hooks, tags, collectives,
// every wait bounded by the timeout), so the logic above the transport (the halo exchanger, the
// bit-width policies) is tested without mpirun, as gloo tests its collectives; the mpirun tests
// stay for the real transports. Sends are copied into the receiver's mailbox at once (eager), so
// an exchange completes as soon as every peer has sent.
#pragma once

#include <functional>
#include <memory>

#include "adaqp/comm/communicator.h"

namespace adaqp {

// `size` communicators of one world; give each to its own thread.
std::vector<std::unique_ptr<Communicator>> make_thread_communicators(int size, double timeout_s);

// Runs fn(communicator) on `size` threads, one rank each, and joins them; rethrows the exception
// of the lowest rank that threw.
void run_thread_ranks(int size, const std::function<void(Communicator&)>& fn,
                      double timeout_s = 60.0);

}  // namespace adaqp
