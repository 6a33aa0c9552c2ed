// estimate_clock_offset (clock_offset.h) over MPI: the ranks of one host share the steady clock.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "adaqp/comm/clock_offset.h"
#include "adaqp/comm/mpi_communicator.h"

namespace adaqp {
namespace {

TEST(ClockOffset, RankZeroIsTheReferenceAndOneHostsRanksAgree) {
  const std::unique_ptr<Communicator> comm_ptr = make_mpi_communicator(MPI_COMM_WORLD, 60.0);
  Communicator& comm = *comm_ptr;
  const double offset = estimate_clock_offset(comm, 8);
  if (comm.rank() == 0) {
    EXPECT_EQ(offset, 0.0);
  } else {
    // One host, one clock: the estimate is off by at most half a round trip (1 s is far beyond).
    EXPECT_TRUE(std::isfinite(offset));
    EXPECT_LT(std::abs(offset), 1.0);
  }
  // Every rank took part and the point-to-point traffic is all consumed: a collective follows.
  std::vector<double> all(static_cast<size_t>(comm.size()));
  comm.allgather(&offset, all.data(), sizeof(double));
  EXPECT_EQ(all[0], 0.0);
}

}  // namespace
}  // namespace adaqp
