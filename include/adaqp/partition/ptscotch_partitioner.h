// partition.method ptscotch: PT-Scotch's k-way mapping, computed by every rank of the job
// together on the graph's slices (graph/graph_slice.h), so that no rank holds the whole graph.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/graph/graph_slice.h"
#include "adaqp/partition/assign_parts.h"

namespace adaqp {

// This slice's rows of the graph PT-Scotch partitions (global ids, each row sorted, no repeats):
// the symmetrised graph without self-loops; with opt.sample_degree > 0 a sample of it in which
// every node keeps its sample_degree neighbours of smallest edge hash (seeded by opt.seed; all of
// them if it has no more) and every edge a neighbour keeps, so the sample is symmetric and the
// same at every world size. Collective.
struct SliceRows {
  std::vector<int64_t> indptr, indices;
};
SliceRows ptscotch_graph(const GraphSlice& s, Communicator& comm, const PartitionOptions& opt);

// The owner in [0, opt.parts) of every node of this rank's slice, as METIS sees the graph: the
// graph of ptscotch_graph, unit vertex and edge weights (PT-Scotch has no
// multi-constraint balance: balance_train and balance_edges are ConfigErrors). `mpi` is the
// communicator PT-Scotch runs on and `comm` the job's over the same ranks. Seeded by opt.seed and
// deterministic for the same slices, options and rank count. InputError if a part ends up empty,
// CommError-free Error if PT-Scotch fails (its message goes to stderr).
std::vector<int32_t> ptscotch_owners(const GraphSlice& s, MPI_Comm mpi, Communicator& comm,
                                     const PartitionOptions& opt);

}  // namespace adaqp
