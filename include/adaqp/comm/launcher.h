// What the launcher tells a process before MPI starts, read from its environment: OpenMPI's mpirun
// (OMPI_COMM_WORLD_RANK), PMIx (PMIX_RANK), PMI-2 (PMI_RANK), Cray PALS (PALS_RANKID), and
// Slurm's srun (SLURM_PROCID, SLURM_STEP_NUM_TASKS).
#pragma once

#include <functional>
#include <string>

namespace adaqp {

// A variable's value, or nullptr when unset: std::getenv, or a table in tests.
using Environment = std::function<const char*(const char* name)>;
const char* process_environment(const char* name);

// Whether this process is the job's first (rank 0, or started without a launcher): the one that
// reports a mistake found before MPI starts, so that the job prints it once.
bool first_launched_process(const Environment& env = process_environment);

// Why MPI cannot start in this process, or "" when nothing known speaks against it. One case: a
// task that srun started without an MPI plugin (`srun --mpi=none`, or a cluster whose MpiDefault
// is none), when this build's MPI is Open MPI, which then has no way to join its tasks (Debian's
// is built without Slurm's PMI-1; Open MPI 5 has only PMIx) and aborts inside MPI_Init with a note
// on how it was built. ADAQP_LAUNCH_CHECK=0 skips the check, for an Open MPI built with PMI-1.
std::string mpi_launch_problem(const Environment& env = process_environment);

}  // namespace adaqp
