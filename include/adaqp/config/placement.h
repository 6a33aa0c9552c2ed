// Where a job runs (training.device) and over which transport (communication.backend), decided
// per rank from the configuration and what the rank sees: the build's CUDA support, the visible
// GPUs, the ranks sharing this host and whether NCCL_HOSTID is set.
#pragma once

#include <string>

#include "adaqp/common/choices.h"
#include "adaqp/common/device.h"

namespace adaqp {

struct PlacementEnvironment {
  bool cuda_build = false;  // built with CUDA, NCCL and a CUDA libtorch
  int visible_devices = 0;  // CUDA devices this rank sees
  std::string no_devices;   // with none: what the CUDA runtime said
  int local_rank = 0;       // this rank's index among the ranks of its host
  int local_ranks = 1;      // ranks on this host
  // Another rank of the host would use the same physical GPU (by UUID: clusters that show each
  // rank only its own GPU number it 0 everywhere).
  bool gpu_shared = false;
  // NCCL_HOSTID is set on this rank and no other rank of the host has the same value (NCCL then
  // lets ranks share a GPU, over its socket transport).
  bool distinct_host_ids = false;
  int rank = 0;
};

struct Placement {
  Device device;
  Backend backend = Backend::kMpi;  // kMpi or kNccl
  std::string reason;               // why, for the start-up log
  // Not "" when the placement works but runs slowly: distinct NCCL_HOSTIDs on ranks of one host
  // make NCCL treat them as separate hosts, so their exchanges go over its socket transport.
  std::string warning;
};

// training.device: cpu, cuda (GPU local_rank % visible devices) or auto (cuda when the build has
// CUDA, a GPU is visible and the rank's GPU is its own or its NCCL_HOSTID is distinct, and the
// backend is not mpi; else cpu). communication.backend: mpi (cpu only), nccl (cuda only) or auto
// (the device's). ConfigError naming the key, the value and the fix when the choice cannot work on
// this rank.
Placement choose_placement(DeviceChoice device, Backend backend, const PlacementEnvironment& env);

// What this process sees of the build and its GPUs; the caller fills in the ranks of the host and
// what they share (it needs their ids: gpu_identity, and NCCL_HOSTID).
PlacementEnvironment probe_placement_environment();

// The physical GPU this rank would use under training.device cuda (its UUID), "" without one.
std::string gpu_identity(int local_rank);

}  // namespace adaqp
