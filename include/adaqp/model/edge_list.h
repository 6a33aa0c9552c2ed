// A worker's in-edges as a list, for layers that weigh the edges themselves (attention), which
// read A's pattern and not its products.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "adaqp/common/device.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/partition/part.h"

namespace adaqp {

// Every in-edge of the owned nodes as int64 (destination, source) pairs on the device, in three
// runs: edges [0, central) into the central rows (rows [0, num_central), whose sources are all
// owned), [central, local) into the marginal rows from owned rows, and [local, E) into the marginal
// rows from received rows. The marginal rows' destinations are numbered from the first marginal
// row (row - num_central); the sources over the owned rows, then the received rows (num_owned +
// received row). `gids`: the global node id of every row the sources number.
struct EdgeList {
  at::Tensor dst, src, gids;
  int64_t central = 0, local = 0;
};

// The list of A_local's and A_halo's entries (`local`, `halo`: over the part's owned and halo
// nodes, the rows layout's received rows).
EdgeList edge_list(const Part& part, const kernels::CsrView& local, const kernels::CsrView& halo,
                   const Device& device);

}  // namespace adaqp
