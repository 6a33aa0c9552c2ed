// What the launcher tells a process before MPI starts: the environment of OpenMPI's mpirun, of
// PMIx and PMI-2, and of Slurm's srun.
#pragma once

namespace adaqp::cli {

// Whether this process is the job's first (rank 0, or started without a launcher): the one that
// reports a mistake found before MPI starts, so that the job prints it once.
bool first_launched_process();

// Before MPI_Init: a task that srun started without an MPI plugin (`--mpi=none`, or a cluster
// whose MpiDefault is none) cannot join the others in one MPI job; OpenMPI aborts inside MPI_Init
// with a note on how it was built. Throws a CommError naming the remedy on the first task,
// CLI::RuntimeError(1) (exit 1, no message) on the others.
void require_mpi_launch();

}  // namespace adaqp::cli
