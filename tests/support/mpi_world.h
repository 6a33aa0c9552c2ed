// The world of the multi-process tests: a communicator over every rank mpirun started, and this
// rank's part of a graph partitioned across them.
#pragma once

#include <mpi.h>

#include <memory>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/graph/graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"

namespace adaqp::test {

// A minute per collective: a deadlock fails the test instead of hanging it.
inline std::unique_ptr<Communicator> world_comm() {
  return make_mpi_communicator(MPI_COMM_WORLD, 60.0);
}

// This rank's part of `g` cut into one part per rank by the default partitioner.
inline Part my_part(const Graph& g, const Communicator& comm) {
  PartitionOptions popt;
  popt.parts = comm.size();
  return build_part(g, assign_parts(g, popt), comm.rank());
}

}  // namespace adaqp::test
