// Whether the parts the ranks hold belong together. Each part is checked against itself and
// meta.yaml when it is read; what no single part can show is that rank r's send list to rank q is
// q's halo block from r (the exchanges copy one into the other row for row), and that the split
// counts every part normalises its loss by are what the parts hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/part.h"

namespace adaqp {

// Collective. For every ordered pair of ranks, the rows r sends q and the halo rows q expects
// from r must agree in number and, in order, in global id, degrees and node type; every part's
// global_split_counts must equal the training, validation and test nodes of all parts together;
// every node of the graph must be owned by exactly one part.
// Otherwise the same InputError on every rank, naming the part files (partition_part_path(dir, r))
// and the counts: parts of different partitionings or datasets, which would overrun the exchange
// buffers or scale the loss wrongly.
void check_parts_agree(Communicator& comm, const Part& part, const std::string& dir);

// The same check on one process (adaqp info --verify): `all` holds part_contribution of parts 0 to
// world - 1 of the partition in `dir`, one after another.
std::vector<int64_t> part_contribution(const Part& part);
void check_contributions_agree(const std::vector<int64_t>& all, int world, const std::string& dir);

}  // namespace adaqp
