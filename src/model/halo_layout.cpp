#include "adaqp/model/halo_layout.h"

#include <string>

#include "adaqp/common/error.h"
#include "halo_layouts.h"

namespace adaqp {

std::unique_ptr<HaloLayout> make_halo_layout(ExchangeLayout layout, const Part& part,
                                             Communicator& comm, const EdgeNorm& norm,
                                             const Device& device) {
  switch (layout) {
    case ExchangeLayout::kRows:
      return make_rows_halo_layout(part, norm);
    case ExchangeLayout::kCover:
      return make_cover_halo_layout(part, comm, norm, device);
    case ExchangeLayout::kRelationFirst:
      return make_relation_first_halo_layout(part, comm);
    case ExchangeLayout::kAuto:
      throw InvariantError("exchange layout auto reached a graph: the trainer chooses it");
  }
  throw InvariantError("unknown exchange layout " + std::to_string(static_cast<int>(layout)));
}

}  // namespace adaqp
