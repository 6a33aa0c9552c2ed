#include "rank_placement.h"

#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/common/affinity.h"

namespace adaqp::cli {

namespace {

// The communicator of this host's ranks, freed however the scope ends.
struct HostComm {
  HostComm() {
    check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comm),
              "MPI_Comm_split_type", -1);
  }
  ~HostComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  HostComm(const HostComm&) = delete;
  HostComm& operator=(const HostComm&) = delete;
  MPI_Comm comm = MPI_COMM_NULL;
};

}  // namespace

LocalRanks local_ranks() {
  const HostComm host;
  LocalRanks l;
  int code = MPI_Comm_rank(host.comm, &l.rank);
  if (code == MPI_SUCCESS) code = MPI_Comm_size(host.comm, &l.size);
  // Per rank, as fixed-size texts: the GPU it would use, its NCCL_HOSTID, and a hash of the CPUs
  // it may run on.
  constexpr size_t kText = 64, kFields = 3;
  std::string gpu;
  try {
    gpu = gpu_identity(l.rank);
  } catch (const std::exception&) {
    gpu.clear();  // no usable GPU here: placement says so later
  }
  const char* env = std::getenv("NCCL_HOSTID");
  const std::string host_id = env != nullptr ? env : "";
  const std::string cpus =
      fmt::format("{:016x}", std::hash<std::string>{}(process_affinity().cpus));
  std::string mine;
  for (const std::string& field : {gpu, host_id, cpus}) {
    mine += field.substr(0, kText) + std::string(kText - std::min(field.size(), kText), '\0');
  }
  std::vector<char> all(kFields * kText * static_cast<size_t>(l.size));
  if (code == MPI_SUCCESS) {
    code = MPI_Allgather(mine.data(), kFields * kText, MPI_CHAR, all.data(), kFields * kText,
                         MPI_CHAR, host.comm);
  }
  check_mpi(code, "MPI_Allgather (ranks of this host)", -1);
  l.distinct_host_ids = !host_id.empty();
  const auto field_of = [&](const char* text, size_t field) {
    return std::string_view(text + field * kText, kText);
  };
  for (int r = 0; r < l.size; ++r) {
    if (r == l.rank) continue;
    const char* theirs = all.data() + kFields * kText * static_cast<size_t>(r);
    if (!gpu.empty() && field_of(mine.data(), 0) == field_of(theirs, 0)) l.gpu_shared = true;
    if (field_of(mine.data(), 1) == field_of(theirs, 1)) l.distinct_host_ids = false;
    if (field_of(mine.data(), 2) == field_of(theirs, 2)) ++l.on_same_cpus;
  }
  return l;
}

int compute_threads(const TrainingConfig& t, const LocalRanks& local) {
  std::string warning;
  const int threads =
      compute_threads_for(t.threads, process_affinity(), local.on_same_cpus, &warning);
  if (!warning.empty()) spdlog::warn("{}", warning);
  return threads;
}

Placement place(int rank, const LocalRanks& local, const JobConfig& cfg) {
  PlacementEnvironment env = probe_placement_environment();
  env.local_rank = local.rank;
  env.local_ranks = local.size;
  env.gpu_shared = local.gpu_shared;
  env.distinct_host_ids = local.distinct_host_ids;
  env.rank = rank;
  return choose_placement(cfg.training.device, cfg.communication.backend, env);
}

void agree_on_device(Communicator& comm, Placement& p) {
  double on_cpu = p.device.is_cuda() ? 0.0 : 1.0;
  comm.allreduce_max(&on_cpu, 1);
  if (on_cpu == 0 || !p.device.is_cuda()) return;
  p = Placement{Device::cpu(), Backend::kMpi,
                "training.device auto: another rank has no GPU of its own", ""};
}

}  // namespace adaqp::cli
