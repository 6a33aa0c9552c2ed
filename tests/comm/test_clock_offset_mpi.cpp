// estimate_clock_offset (clock_offset.h) over MPI: the ranks of one host share the steady clock.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "adaqp/comm/clock_offset.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/clock.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

TEST(ClockOffset, RankZeroIsTheReferenceAndOneHostsRanksAgree) {
  const std::unique_ptr<Communicator> comm_ptr = test::world_comm();
  Communicator& comm = *comm_ptr;
  const double begin_s = steady_now_s();
  const double offset = estimate_clock_offset(comm, 8);
  const double elapsed_s = steady_now_s() - begin_s;
  if (comm.rank() == 0) {
    EXPECT_EQ(offset, 0.0);
  } else {
    // One host, one clock: the true offset is 0, and the estimate is off by at most half its
    // shortest round trip, which took no longer than the whole call.
    EXPECT_TRUE(std::isfinite(offset));
    EXPECT_LE(std::abs(offset), elapsed_s / 2) << "the call took " << elapsed_s << " s";
  }
  // Every rank took part and the point-to-point traffic is all consumed: a collective follows.
  std::vector<double> all(static_cast<size_t>(comm.size()));
  comm.allgather(&offset, all.data(), sizeof(double));
  EXPECT_EQ(all[0], 0.0);
}

}  // namespace
}  // namespace adaqp
