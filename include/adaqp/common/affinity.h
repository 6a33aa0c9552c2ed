// The cores this process may run on (its CPU affinity mask, as mpirun's binding leaves it): the
// number of compute threads that can really run in parallel.
#pragma once

#include <string>

namespace adaqp {

struct Affinity {
  int cores = 1;       // CPUs in the mask
  int host_cores = 1;  // CPUs of the host
  std::string cpus;    // the mask as a list, e.g. "0-3,8"
};

Affinity process_affinity();

// ConfigError when `requested` compute threads exceed the host's CPUs: a rank with thousands of
// threads on a few cores makes no progress (the threads spin in every parallel region's barrier).
void require_threads_within_host(int requested, const Affinity& affinity);

// Compute threads for a rank: `requested` (> 0) as given, else the cores of its mask, shared with
// the other ranks of its host that may run on exactly the same CPUs (`ranks_on_mask`, itself
// included): every rank of the host when none is bound (--bind-to none), the ranks of a socket
// under binding to sockets (mpirun's default beyond 2 ranks), itself alone when each rank has
// cores of its own. `warning` (set when not null) explains a requested count beyond the mask, and
// the fix.
int compute_threads_for(int requested, const Affinity& affinity, int ranks_on_mask,
                        std::string* warning);

}  // namespace adaqp
