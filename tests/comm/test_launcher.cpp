// What a process learns from its launcher before MPI starts (comm/launcher.h), over the
// environments of the launchers docs/cluster.md names.
#include "adaqp/comm/launcher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mpi.h>  // OPEN_MPI: the check applies to Open MPI builds

#include <map>
#include <string>

namespace adaqp {
namespace {

using ::testing::HasSubstr;

Environment table(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(Launcher, FirstProcessByTheLaunchersRank) {
  EXPECT_TRUE(first_launched_process(table({})));
  EXPECT_TRUE(first_launched_process(table({{"OMPI_COMM_WORLD_RANK", "0"}})));
  EXPECT_FALSE(first_launched_process(table({{"OMPI_COMM_WORLD_RANK", "1"}})));
  EXPECT_FALSE(first_launched_process(table({{"PMIX_RANK", "3"}})));
  EXPECT_FALSE(first_launched_process(table({{"PMI_RANK", "2"}})));
  EXPECT_FALSE(first_launched_process(table({{"PALS_RANKID", "5"}})));
  EXPECT_FALSE(first_launched_process(table({{"SLURM_PROCID", "1"}})));
  // mpirun inside an srun step: the step's task 0 runs every rank; mpirun's rank decides.
  EXPECT_FALSE(
      first_launched_process(table({{"SLURM_PROCID", "0"}, {"OMPI_COMM_WORLD_RANK", "1"}})));
  EXPECT_TRUE(first_launched_process(table({{"SLURM_PROCID", "1"}, {"PMIX_RANK", "0"}})));
}

TEST(Launcher, SrunWithoutAnMpiPluginIsTheOneProblemKnown) {
  // No launcher, mpirun (also inside an allocation, whose remote ranks carry the step of mpirun's
  // daemons), srun with PMIx or PMI-2, and a batch script's own shell: nothing speaks against MPI.
  EXPECT_EQ(mpi_launch_problem(table({})), "");
  EXPECT_EQ(mpi_launch_problem(table({{"OMPI_COMM_WORLD_RANK", "0"}})), "");
  EXPECT_EQ(
      mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "2"}, {"OMPI_COMM_WORLD_RANK", "5"}})),
      "");
  EXPECT_EQ(mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "4"}, {"PMIX_RANK", "1"}})), "");
  EXPECT_EQ(mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "4"}, {"PMI_RANK", "1"}})), "");
  EXPECT_EQ(mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "4"}, {"PALS_RANKID", "1"}})), "");
  EXPECT_EQ(mpi_launch_problem(table({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}})), "");
#ifdef OPEN_MPI
  const std::string problem = mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "4"}}));
  EXPECT_THAT(problem, HasSubstr("srun started 4 task(s) without an MPI plugin"));
  EXPECT_THAT(problem, HasSubstr("srun --mpi=pmix"));
  EXPECT_EQ(mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "4"}, {"ADAQP_LAUNCH_CHECK", "0"}})),
            "");
#else
  EXPECT_EQ(mpi_launch_problem(table({{"SLURM_STEP_NUM_TASKS", "4"}})), "");
#endif
}

}  // namespace
}  // namespace adaqp
