// Where a job runs (training.device) and over which transport (communication.backend), decided
// per rank from the configuration and what the rank sees: the build's CUDA support, the visible
// GPUs, the ranks sharing this host and whether NCCL_HOSTID is set.
#pragma once

#include <string>

#include "adaqp/common/device.h"

namespace adaqp {

struct PlacementEnvironment {
  bool cuda_build = false;         // built with CUDA, NCCL and a CUDA libtorch
  int visible_devices = 0;         // CUDA devices this rank sees
  int local_rank = 0;              // this rank's index among the ranks of its host
  int local_ranks = 1;             // ranks on this host
  bool distinct_host_ids = false;  // NCCL_HOSTID is set (several ranks may share one GPU)
  int rank = 0;
};

struct Placement {
  Device device;
  std::string backend;  // "mpi" or "nccl"
  std::string reason;   // why, for the start-up log
};

// training.device: cpu, cuda (GPU local_rank % visible devices) or auto (cuda when the build has
// CUDA, a GPU is visible and every rank of the host gets a GPU of its own or NCCL_HOSTID is set;
// else cpu). communication.backend: mpi (cpu only), nccl (cuda only) or auto (the device's).
// ConfigError naming the key, the value and the fix when the choice cannot work on this rank.
Placement choose_placement(const std::string& device, const std::string& backend,
                           const PlacementEnvironment& env);

// What this process sees: the build, the visible GPUs, NCCL_HOSTID; the caller fills the ranks.
PlacementEnvironment probe_placement_environment();

}  // namespace adaqp
