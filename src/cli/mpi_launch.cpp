#include "mpi_launch.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <string>

#include "adaqp/common/error.h"

namespace adaqp::cli {
namespace {

// The job's rank of this process, by the first variable a launcher set; nullptr without one.
const char* launched_rank(bool with_slurm) {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (const char* r = std::getenv(var)) return r;
  }
  return with_slurm ? std::getenv("SLURM_PROCID") : nullptr;
}

}  // namespace

bool first_launched_process() {
  const char* rank = launched_rank(/*with_slurm=*/true);
  return rank == nullptr || std::string(rank) == "0";
}

void require_mpi_launch() {
  // A task of an srun step has SLURM_STEP_NUM_TASKS; a batch script itself (a singleton MPI job
  // when it runs adaqp directly) and the ranks of mpirun inside an allocation do not, or also have
  // their launcher's rank.
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (tasks == nullptr || launched_rank(/*with_slurm=*/false) != nullptr) return;
  if (!first_launched_process()) throw CLI::RuntimeError(1);
  throw CommError(fmt::format(
      "srun started {} task(s) without an MPI plugin (srun --mpi=none, or the cluster's "
      "MpiDefault), which cannot start MPI: launch with srun --mpi=pmix (srun --mpi=list shows the "
      "cluster's plugins), or with mpirun inside the allocation",
      tasks));
}

}  // namespace adaqp::cli
