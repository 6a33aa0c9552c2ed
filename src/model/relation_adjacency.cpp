#include "adaqp/model/relation_adjacency.h"

#include <limits>
#include <string>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

// The block of one source kind (owned or received rows): pair p's entries are the in-edges of its
// row of its relation, in stored order (ascending column), each weighing 1 / deg.
kernels::CsrMatrix pair_block(const std::vector<int64_t>& indptr,
                              const std::vector<int32_t>& indices,
                              const std::vector<int32_t>& relations, int64_t cols,
                              const std::vector<int64_t>& pair_of, const std::vector<int64_t>& deg,
                              int64_t owned, int64_t pairs) {
  kernels::CsrMatrix m;
  m.rows = pairs;
  m.cols = cols;
  m.indptr.assign(static_cast<size_t>(pairs) + 1, 0);
  for (int64_t i = 0; i < owned; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      ++m.indptr[pair_of[relations[k] * owned + i] + 1];
    }
  }
  for (int64_t p = 0; p < pairs; ++p) m.indptr[p + 1] += m.indptr[p];
  m.indices.resize(indices.size());
  m.values.resize(indices.size());
  std::vector<int64_t> next(m.indptr.begin(), m.indptr.end() - 1);
  for (int64_t i = 0; i < owned; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      const int64_t key = relations[k] * owned + i;
      const int64_t at = next[pair_of[key]]++;
      m.indices[at] = indices[k];
      m.values[at] = static_cast<float>(1.0 / static_cast<double>(deg[key]));
    }
  }
  return m;
}

}  // namespace

RelationAdjacency::RelationAdjacency(const Part& part, const Device& device) {
  ADAQP_CHECK(part.num_relations >= 1,
              "a relation adjacency of a part without node types and relations");
  const int64_t owned = part.num_owned(), relations = part.num_relations;
  // deg[r * owned + i]: the relation-r in-edges of owned row i.
  std::vector<int64_t> deg(static_cast<size_t>(relations * owned), 0);
  const auto count = [&](const std::vector<int64_t>& indptr, const std::vector<int32_t>& rel) {
    for (int64_t i = 0; i < owned; ++i) {
      for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
        ADAQP_CHECK(rel[k] >= 0 && rel[k] < relations,
                    "edge relation " + std::to_string(rel[k]) + " of " + std::to_string(relations));
        ++deg[rel[k] * owned + i];
      }
    }
  };
  count(part.local_indptr, part.local_relations);
  count(part.halo_indptr, part.halo_relations);
  std::vector<int64_t> pair_of(deg.size(), -1);
  std::vector<int64_t> pair_row;
  pair_offsets_.push_back(0);
  for (int64_t r = 0; r < relations; ++r) {
    for (int64_t i = 0; i < owned; ++i) {
      if (deg[r * owned + i] == 0) continue;
      pair_of[r * owned + i] = static_cast<int64_t>(pair_row.size());
      pair_row.push_back(i);
    }
    pair_offsets_.push_back(static_cast<int64_t>(pair_row.size()));
  }
  const int64_t pairs = num_pairs();
  ADAQP_CHECK(pairs <= std::numeric_limits<int32_t>::max(),
              std::to_string(pairs) + " (node, relation) pairs: more than 32-bit columns index");
  kernels::CsrMatrix local = pair_block(part.local_indptr, part.local_indices, part.local_relations,
                                        owned, pair_of, deg, owned, pairs);
  kernels::CsrMatrix halo = pair_block(part.halo_indptr, part.halo_indices, part.halo_relations,
                                       part.num_halo(), pair_of, deg, owned, pairs);
  // combine: row i holds its pairs, in relation order.
  kernels::CsrMatrix combine;
  combine.rows = owned;
  combine.cols = pairs;
  combine.indptr.assign(static_cast<size_t>(owned) + 1, 0);
  for (int64_t i : pair_row) ++combine.indptr[i + 1];
  for (int64_t i = 0; i < owned; ++i) combine.indptr[i + 1] += combine.indptr[i];
  combine.indices.resize(static_cast<size_t>(pairs));
  combine.values.assign(static_cast<size_t>(pairs), 1.0F);
  std::vector<int64_t> next(combine.indptr.begin(), combine.indptr.end() - 1);
  for (int64_t p = 0; p < pairs; ++p) {
    combine.indices[next[pair_row[p]]++] = static_cast<int32_t>(p);
  }
  local_t_ = AdjacencyBlock::transpose(local.view(), device);
  halo_t_ = AdjacencyBlock::transpose(halo.view(), device);
  combine_t_ = AdjacencyBlock::transpose(combine.view(), device);
  local_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(local), device);
  halo_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(halo), device);
  combine_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(combine), device);
}

RelationAdjacency::~RelationAdjacency() = default;

}  // namespace adaqp
