#include "adaqp/common/affinity.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp {

Affinity process_affinity() {
  Affinity a;
  a.host_cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    a.cores = a.host_cores;
    a.cpus = fmt::format("0-{}", a.host_cores - 1);
    return a;
  }
  a.cores = std::max(1, CPU_COUNT(&set));
  std::vector<std::string> ranges;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    ranges.push_back(last == c ? fmt::format("{}", c) : fmt::format("{}-{}", c, last));
    c = last;
  }
  a.cpus = fmt::format("{}", fmt::join(ranges, ","));
  return a;
}

void require_threads_within_host(int requested, const Affinity& affinity) {
  if (requested <= affinity.host_cores) return;
  throw ConfigError(fmt::format(
      "training.threads = {}: this host has {} CPU(s), so at most {} (0: this rank's share of its "
      "cores)",
      requested, affinity.host_cores, affinity.host_cores));
}

int compute_threads_for(int requested, const Affinity& affinity, int ranks_on_mask,
                        std::string* warning) {
  if (requested > 0) {
    if (requested > affinity.cores && warning != nullptr) {
      *warning = fmt::format(
          "training.threads = {} but this rank may run on {} core(s) (CPUs {}): its threads share "
          "them. mpirun binds each of up to 2 ranks to one core by default; launch with "
          "--bind-to none, or --map-by ppr:<ranks per node>:node:PE=<cores per rank> (srun: "
          "--cpus-per-task=<cores per rank>), or lower training.threads",
          requested, affinity.cores, affinity.cpus);
    }
    return requested;
  }
  return std::max(1, affinity.cores / std::max(1, ranks_on_mask));
}

}  // namespace adaqp
