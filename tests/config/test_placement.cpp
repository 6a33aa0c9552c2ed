// training.device and communication.backend resolved against what a rank sees: the choices that
// work, and one clear ConfigError naming the key, the value and the fix for those that cannot.
#include <gtest/gtest.h>

#include <string>

#include "adaqp/common/affinity.h"
#include "adaqp/common/error.h"
#include "adaqp/config/placement.h"
#include "test_util.h"

namespace adaqp {
namespace {

// A rank of a host with `local_ranks` ranks that sees `visible` GPUs; the ranks share GPUs when
// there are more ranks than GPUs (each rank seeing all of them).
PlacementEnvironment gpus(int visible, int local_rank, int local_ranks, bool host_ids = false) {
  PlacementEnvironment env;
  env.cuda_build = true;
  env.visible_devices = visible;
  env.local_rank = local_rank;
  env.local_ranks = local_ranks;
  env.gpu_shared = visible > 0 && local_ranks > visible;
  env.distinct_host_ids = host_ids;
  env.rank = 5;
  return env;
}

// Runs `call`, expecting a ConfigError whose message contains every one of `parts`.
template <typename Call>
void expect_config_error(Call call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Placement, AutoTakesTheRanksOwnGpuWhenEveryRankHasOne) {
  const Placement p = choose_placement(DeviceChoice::kAuto, Backend::kAuto, gpus(4, 3, 4));
  EXPECT_TRUE(p.device.is_cuda());
  EXPECT_EQ(p.device.index, 3);
  EXPECT_EQ(p.backend, Backend::kNccl);
  // Several ranks on one GPU with distinct NCCL host ids: the GPU is shared.
  const Placement shared =
      choose_placement(DeviceChoice::kCuda, Backend::kAuto, gpus(1, 2, 4, true));
  EXPECT_EQ(shared.device.index, 0);
  EXPECT_EQ(shared.backend, Backend::kNccl);
  EXPECT_TRUE(p.warning.empty()) << p.warning;
  EXPECT_NE(shared.warning.find("socket transport"), std::string::npos) << shared.warning;
  EXPECT_NE(shared.warning.find("they share a GPU"), std::string::npos) << shared.warning;
  // Distinct host ids where every rank has its own GPU: works, over sockets; says to unset them.
  PlacementEnvironment own = gpus(4, 3, 4, true);
  const Placement sockets = choose_placement(DeviceChoice::kCuda, Backend::kAuto, own);
  EXPECT_EQ(sockets.device.index, 3);
  EXPECT_NE(sockets.warning.find("unset NCCL_HOSTID"), std::string::npos) << sockets.warning;
  EXPECT_TRUE(choose_placement(DeviceChoice::kCpu, Backend::kAuto, own).warning.empty());
}

// Clusters that show each rank only its own GPU: every rank sees one device, numbered 0, and no
// two ranks share one.
TEST(Placement, OneVisibleGpuPerRankIsNotShared) {
  PlacementEnvironment env = gpus(1, 3, 4);
  env.gpu_shared = false;
  const Placement p = choose_placement(DeviceChoice::kAuto, Backend::kAuto, env);
  EXPECT_TRUE(p.device.is_cuda());
  EXPECT_EQ(p.device.index, 0);
}

TEST(Placement, AutoFallsBackToTheCpuAndSaysWhy) {
  PlacementEnvironment cpu_build;
  const Placement a = choose_placement(DeviceChoice::kAuto, Backend::kAuto, cpu_build);
  EXPECT_FALSE(a.device.is_cuda());
  EXPECT_EQ(a.backend, Backend::kMpi);
  EXPECT_NE(a.reason.find("no GPU support"), std::string::npos) << a.reason;
  const Placement b = choose_placement(DeviceChoice::kAuto, Backend::kAuto, gpus(0, 0, 1));
  EXPECT_NE(b.reason.find("no CUDA device is visible on rank 5"), std::string::npos) << b.reason;
  const Placement c = choose_placement(DeviceChoice::kAuto, Backend::kAuto, gpus(1, 0, 2));
  EXPECT_FALSE(c.device.is_cuda());
  EXPECT_NE(c.reason.find("2 ranks on rank 5's host share 1 GPU(s)"), std::string::npos)
      << c.reason;
  // An explicit MPI transport under device auto: the CPU (older configs named backend mpi).
  const Placement d = choose_placement(DeviceChoice::kAuto, Backend::kMpi, gpus(4, 0, 1));
  EXPECT_FALSE(d.device.is_cuda());
  EXPECT_EQ(d.backend, Backend::kMpi);
}

TEST(Placement, CudaThatCannotRunIsAClearError) {
  expect_config_error(
      [] { choose_placement(DeviceChoice::kCuda, Backend::kAuto, PlacementEnvironment{}); },
      {"training.device = cuda", "no GPU support", "training.device=cpu"});
  expect_config_error([] { choose_placement(DeviceChoice::kCuda, Backend::kAuto, gpus(0, 0, 1)); },
                      {"training.device = cuda", "no CUDA device is visible on rank 5"});
  expect_config_error([] { choose_placement(DeviceChoice::kCuda, Backend::kNccl, gpus(2, 0, 3)); },
                      {"3 ranks on rank 5's host share 2 GPU(s)", "NCCL_HOSTID"});
}

TEST(Placement, BackendMustMatchTheDevice) {
  expect_config_error(
      [] { choose_placement(DeviceChoice::kCuda, Backend::kMpi, gpus(1, 0, 1)); },
      {"communication.backend = mpi", "host memory only", "cuda:0", "communication.backend=nccl"});
  expect_config_error([] { choose_placement(DeviceChoice::kCpu, Backend::kNccl, gpus(1, 0, 1)); },
                      {"communication.backend = nccl", "training.device=cuda"});
  EXPECT_EQ(choose_placement(DeviceChoice::kCpu, Backend::kMpi, gpus(1, 0, 1)).backend,
            Backend::kMpi);
}

// Threads follow the cores a rank may run on, shared with the ranks bound to the same ones: its
// own cores when the launcher gave it some, its share of a socket when bound to sockets, of the
// host when not bound; a request beyond the mask is kept but explained.
TEST(ComputeThreads, FollowTheAffinityMask) {
  const Affinity bound{1, 16, "3"}, unbound{16, 16, "0-15"}, pe4{4, 16, "4-7"},
      socket{8, 16, "8-15"};
  EXPECT_EQ(compute_threads_for(0, bound, 1, nullptr), 1);
  EXPECT_EQ(compute_threads_for(0, unbound, 4, nullptr), 4);
  EXPECT_EQ(compute_threads_for(0, unbound, 1, nullptr), 16);
  EXPECT_EQ(compute_threads_for(0, pe4, 1, nullptr), 4);
  EXPECT_EQ(compute_threads_for(0, socket, 2, nullptr), 4);
  EXPECT_EQ(compute_threads_for(0, socket, 3, nullptr), 2);
  EXPECT_EQ(compute_threads_for(0, bound, 3, nullptr), 1);
  std::string warning;
  EXPECT_EQ(compute_threads_for(2, pe4, 4, &warning), 2);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ(compute_threads_for(8, bound, 4, &warning), 8);
  EXPECT_NE(warning.find("training.threads = 8 but this rank may run on 1 core(s) (CPUs 3)"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("--bind-to none"), std::string::npos) << warning;
  EXPECT_NO_THROW(require_threads_within_host(16, bound));
  const std::string error =
      test::error_of<ConfigError>([&] { require_threads_within_host(17, unbound); });
  EXPECT_NE(error.find("training.threads = 17: this host has 16 CPU(s), so at most 16"),
            std::string::npos)
      << error;
  const Affinity mine = process_affinity();
  EXPECT_GE(mine.cores, 1);
  EXPECT_LE(mine.cores, mine.host_cores);
  EXPECT_FALSE(mine.cpus.empty());
}

}  // namespace
}  // namespace adaqp
