#include "adaqp/model/edge_list.h"

#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

EdgeList edge_list(const Part& part, const kernels::CsrView& local, const kernels::CsrView& halo,
                   const Device& device) {
  const int64_t owned = part.num_owned(), central = part.num_central;
  std::vector<int64_t> dst, src;
  dst.reserve(static_cast<size_t>(local.indptr[local.rows] + halo.indptr[halo.rows]));
  src.reserve(dst.capacity());
  // A central row has no halo in-edges: its edges are A_local's first ones.
  ADAQP_CHECK(halo.indptr[central] == 0, "central rows with halo in-edges");
  const auto add = [&](const kernels::CsrView& block, int64_t first_row, int64_t src_offset) {
    for (int64_t i = first_row; i < block.rows; ++i) {
      for (int64_t k = block.indptr[i]; k < block.indptr[i + 1]; ++k) {
        dst.push_back(i < central ? i : i - central);
        src.push_back(src_offset + block.indices[k]);
      }
    }
  };
  add(local, 0, 0);
  add(halo, central, owned);
  std::vector<int64_t> gids = part.owned_gid;
  gids.insert(gids.end(), part.halo_gid.begin(), part.halo_gid.end());
  return EdgeList{to_device(dst, device), to_device(src, device), to_device(gids, device),
                  local.indptr[central], local.indptr[owned]};
}

}  // namespace adaqp
