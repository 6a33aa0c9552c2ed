// adaqp_watched_work_fails RANK: run_watched (src/cli/collective_step.h) over MPI_COMM_WORLD, as
// the PT-Scotch start-up runs it, with work in which rank RANK fails alone outside any collective
// step (std::bad_alloc: its host out of memory while the parts are built) and the other ranks wait
// for it in a barrier; RANK -1: no rank fails; RANK all: every rank fails (as PT-Scotch's errors
// come). The job must end within seconds with one error naming the failing rank, rank 0 where all
// fail (tests/cli/watched_work_fails.sh): the failing rank's MPI_Finalize would wait for the
// others, and they for it, for kSoloWorkTimeoutS (24 hours). A test binary, not a mode of adaqp.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/mpi_session.h"
#include "collective_step.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: adaqp_watched_work_fails RANK (-1: none; all: every rank)\n");
    return 2;
  }
  const bool all = std::string(argv[1]) == "all";
  const int failing = all ? -1 : std::atoi(argv[1]);
  int code = 0;
  {
    const adaqp::MpiSession mpi(&argc, &argv);
    const std::unique_ptr<adaqp::Communicator> comm =
        adaqp::make_mpi_communicator(MPI_COMM_WORLD, 5.0);
    try {
      adaqp::cli::run_watched(*comm, "the test's work", [&] {
        if (all || comm->rank() == failing) throw std::bad_alloc();
        comm->barrier();
        return 0;
      });
      if (comm->rank() == 0) std::printf("every rank finished its work\n");
    } catch (...) {
      code = adaqp::cli::report_error(std::current_exception(), "");
    }
  }
  return code;
}
