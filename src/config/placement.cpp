#include "adaqp/config/placement.h"

#include <fmt/format.h>

#include "adaqp/common/error.h"
#include "adaqp/config.h"
#if ADAQP_WITH_CUDA
#include "adaqp/kernels/cuda_device.h"
#endif

namespace adaqp {

namespace {

// Why this rank cannot train on CUDA ("" when it can).
std::string cuda_obstacle(const PlacementEnvironment& env) {
  if (!env.cuda_build) {
    return "this build of adaqp has no GPU support (it needs the CUDA toolkit, NCCL and a CUDA "
           "build of libtorch at configure time)";
  }
  if (env.visible_devices == 0) {
    return fmt::format("no CUDA device is visible on rank {}{}", env.rank,
                       env.no_devices.empty() ? "" : " (" + env.no_devices + ")");
  }
  if (env.gpu_shared && !env.distinct_host_ids) {
    return fmt::format(
        "{} ranks on rank {}'s host share {} GPU(s): NCCL needs one GPU per rank, or a distinct "
        "NCCL_HOSTID per rank (e.g. mpirun ... bash -c 'NCCL_HOSTID=r$OMPI_COMM_WORLD_RANK exec "
        "adaqp train ...')",
        env.local_ranks, env.rank, env.visible_devices);
  }
  return "";
}

}  // namespace

Placement choose_placement(DeviceChoice device, Backend backend, const PlacementEnvironment& env) {
  Placement p;
  const std::string obstacle = cuda_obstacle(env);
  if (device == DeviceChoice::kCuda) {
    if (!obstacle.empty()) {
      throw ConfigError("training.device = cuda: " + obstacle + "; or set training.device=cpu");
    }
    p.device = Device::cuda(env.local_rank % env.visible_devices);
    p.reason = "training.device cuda";
  } else if (device == DeviceChoice::kCpu) {
    p.reason = "training.device cpu";
  } else {
    if (backend == Backend::kMpi) {
      p.reason = "training.device auto with communication.backend mpi";
    } else if (obstacle.empty()) {
      p.device = Device::cuda(env.local_rank % env.visible_devices);
      p.reason = "training.device auto: a GPU per rank";
    } else {
      p.reason = "training.device auto: " + obstacle;
    }
  }
  if (p.device.is_cuda() && env.distinct_host_ids && env.local_ranks > 1) {
    p.warning = fmt::format(
        "NCCL_HOSTID is set and differs between the {} ranks of rank {}'s host: NCCL treats them "
        "as separate hosts and exchanges between them go over its socket transport, not NVLink "
        "or PCIe peer access; {}",
        env.local_ranks, env.rank,
        env.gpu_shared ? "they share a GPU, which needs it (fine for tests, not for timings)"
                       : "each has its own GPU here, so unset NCCL_HOSTID");
  }
  const Backend natural = p.device.is_cuda() ? Backend::kNccl : Backend::kMpi;
  if (backend == Backend::kAuto || backend == natural) {
    p.backend = natural;
  } else if (backend == Backend::kMpi) {
    throw ConfigError(
        "communication.backend = mpi: the MPI transport moves host memory only, and training runs "
        "on " +
        p.device.name() + " (" + p.reason +
        "); use communication.backend=nccl (or auto), "
        "or training.device=cpu");
  } else {
    throw ConfigError(
        "communication.backend = nccl: NCCL moves GPU memory, and training runs on "
        "the CPU (" +
        p.reason +
        "); use communication.backend=mpi (or auto), or "
        "training.device=cuda");
  }
  return p;
}

PlacementEnvironment probe_placement_environment() {
  PlacementEnvironment env;
#if ADAQP_WITH_CUDA && ADAQP_WITH_NCCL && ADAQP_WITH_TORCH_CUDA
  env.cuda_build = true;
  env.visible_devices = kernels::cuda_device_count(&env.no_devices);
#endif
  return env;
}

std::string gpu_identity(int local_rank) {
#if ADAQP_WITH_CUDA
  const int devices = kernels::cuda_device_count();
  if (devices > 0) return kernels::cuda_device_uuid(local_rank % devices);
#else
  (void)local_rank;
#endif
  return "";
}

}  // namespace adaqp
