#include "adaqp/comm/launcher.h"

#include <fmt/format.h>
#include <mpi.h>

#include <cstdlib>

namespace adaqp {
namespace {

// The job's rank of this process, as an MPI launcher set it; nullptr without one.
const char* mpi_launcher_rank(const Environment& env) {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PALS_RANKID"}) {
    if (const char* rank = env(var)) return rank;
  }
  return nullptr;
}

}  // namespace

const char* process_environment(const char* name) {
  return std::getenv(name);
}

bool first_launched_process(const Environment& env) {
  const char* rank = mpi_launcher_rank(env);
  if (rank == nullptr) rank = env("SLURM_PROCID");
  return rank == nullptr || std::string(rank) == "0";
}

std::string mpi_launch_problem(const Environment& env) {
#ifdef OPEN_MPI
  const char* check = env("ADAQP_LAUNCH_CHECK");
  if (check != nullptr && std::string(check) == "0") return "";
  // The tasks of an srun step have SLURM_STEP_NUM_TASKS; a batch script itself (where adaqp runs
  // as a one-process MPI job) does not, and mpirun's ranks also have mpirun's rank.
  const char* tasks = env("SLURM_STEP_NUM_TASKS");
  if (tasks == nullptr || mpi_launcher_rank(env) != nullptr) return "";
  return fmt::format(
      "srun started {} task(s) without an MPI plugin (srun --mpi=none, or the cluster's "
      "MpiDefault), and this build's Open MPI cannot start MPI in them: launch with srun "
      "--mpi=pmix, or with mpirun inside the allocation (ADAQP_LAUNCH_CHECK=0 skips this check, "
      "for an Open MPI built with Slurm's PMI-1)",
      tasks);
#else
  (void)env;
  return "";
#endif
}

}  // namespace adaqp
