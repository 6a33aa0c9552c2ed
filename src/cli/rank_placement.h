// Where a training rank runs: its place among the ranks of its host, its compute threads, its
// device and transport (config/placement.h), agreed across the job. Start-up steps of
// `adaqp train` (cmd_train.cpp).
#pragma once

#include "adaqp/comm/communicator.h"
#include "adaqp/config/job_config.h"
#include "adaqp/config/placement.h"

namespace adaqp::cli {

// This rank's place among the ranks of its host (an MPI shared-memory split): its index, their
// number, how many of them (itself included) may run on exactly its CPUs, whether another of them
// would use the same physical GPU, and whether this rank's NCCL_HOSTID is set and unlike theirs
// (config/placement.h).
struct LocalRanks {
  int rank = 0;
  int size = 1;
  int on_same_cpus = 1;
  bool gpu_shared = false;
  bool distinct_host_ids = false;
};

// Collective over MPI_COMM_WORLD.
LocalRanks local_ranks();

// training.threads, or (0) the cores this rank may use (common/affinity.h).
int compute_threads(const TrainingConfig& t, const LocalRanks& local);

// training.device and communication.backend on this rank (placement.h): a ConfigError on a rank
// that cannot run what the job asks for.
Placement place(int rank, const LocalRanks& local, const JobConfig& cfg);

// Under training.device auto every rank takes the CPU if any rank cannot have a GPU, so that all
// ranks use one transport (collective).
void agree_on_device(Communicator& comm, Placement& p);

}  // namespace adaqp::cli
