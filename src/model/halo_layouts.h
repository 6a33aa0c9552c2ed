// The HaloLayout implementations, one file each; make_halo_layout (halo_layout.cpp) picks one.
#pragma once

#include <memory>

#include "adaqp/model/halo_layout.h"

namespace adaqp {

// communication.exchange rows: every cut edge's source row travels, gathered by the exchanger
// from the part's send list; returned gradients are added at those rows.
std::unique_ptr<HaloLayout> make_rows_halo_layout(const Part& part, const EdgeNorm& norm);

// communication.exchange cover: per pair of workers a minimum vertex cover of the cut edges,
// source rows and partial sums S h (exchange/cover_layout.h; collective).
std::unique_ptr<HaloLayout> make_cover_halo_layout(const Part& part, Communicator& comm,
                                                   const EdgeNorm& norm, const Device& device);

// communication.exchange relation_first: per pair of workers a minimum cover of transformed source
// rows and destinations' partial sums, formed by the layer (exchange/relation_first_layout.h;
// collective).
std::unique_ptr<HaloLayout> make_relation_first_halo_layout(const Part& part, Communicator& comm);

}  // namespace adaqp
