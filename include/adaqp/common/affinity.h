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
// the other ranks of the host when the mask is the whole host (ranks not bound to cores).
// `warning` (set when not null) explains a requested count beyond the mask, and the fix.
int compute_threads_for(int requested, const Affinity& affinity, int local_ranks,
                        std::string* warning);

}  // namespace adaqp
