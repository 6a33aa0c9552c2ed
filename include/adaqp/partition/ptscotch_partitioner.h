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

// ConfigError for options PT-Scotch cannot take, the same on every rank: METIS's balance
// constraints (PT-Scotch has no multi-constraint balance), a part count other than `world` or
// above the graph's node count.
void require_ptscotch_options(const GraphSlice& s, int world, const PartitionOptions& opt);

// The owner in [0, opt.parts) of every node of this rank's slice, as METIS sees the graph: the
// graph of ptscotch_graph, unit vertex and edge weights; `opt` as require_ptscotch_options
// accepts. `mpi` is the communicator PT-Scotch runs on and `comm` the job's over the same ranks.
// Seeded by opt.seed and deterministic for the same slices, options and rank count. Collective,
// with PT-Scotch's own unbounded MPI calls inside: a caller runs it outside its collective steps
// (an error one rank meets here ends the job: cli::run_watched). Error if PT-Scotch fails (its
// message goes to stderr).
std::vector<int32_t> ptscotch_owners(const GraphSlice& s, MPI_Comm mpi, Communicator& comm,
                                     const PartitionOptions& opt);

// Collective: InputError, the same on every rank, if a part of `owner` (every rank's) is empty;
// rank 0 logs the part sizes.
void require_every_part_owned(const GraphSlice& s, const std::vector<int32_t>& owner, int parts,
                              Communicator& comm);

}  // namespace adaqp
