#include "adaqp/model/relation_adjacency.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

namespace {

// The pairs of a part, found row by row (no array of relations x rows): row i's entries
// [row_begin[i], row_begin[i + 1]) are its relations with in-edges, ascending, each with its
// in-degree by that relation and its pair index (pairs ordered by relation, then row).
struct RowPairs {
  std::vector<int64_t> row_begin{0};
  std::vector<int32_t> relation;
  std::vector<int64_t> degree, pair;

  // The entry of row i's relation r (which has an in-edge of relation r).
  int64_t entry(int64_t i, int32_t r) const {
    for (int64_t k = row_begin[i]; k < row_begin[i + 1]; ++k) {
      if (relation[k] == r) return k;
    }
    throw InvariantError("row " + std::to_string(i) + " has no pair of relation " +
                         std::to_string(r));
  }
};

// The block of one source kind (owned or received rows): pair p's entries are the in-edges of its
// row of its relation, in stored order (ascending column), each weighing 1 / deg.
kernels::CsrMatrix pair_block(const std::vector<int64_t>& indptr,
                              const std::vector<int32_t>& indices,
                              const std::vector<int32_t>& relations, int64_t cols,
                              const RowPairs& rp, int64_t owned, int64_t pairs) {
  kernels::CsrMatrix m;
  m.rows = pairs;
  m.cols = cols;
  m.indptr.assign(static_cast<size_t>(pairs) + 1, 0);
  for (int64_t i = 0; i < owned; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      ++m.indptr[rp.pair[rp.entry(i, relations[k])] + 1];
    }
  }
  for (int64_t p = 0; p < pairs; ++p) m.indptr[p + 1] += m.indptr[p];
  m.indices.resize(indices.size());
  m.values.resize(indices.size());
  std::vector<int64_t> next(m.indptr.begin(), m.indptr.end() - 1);
  for (int64_t i = 0; i < owned; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      const int64_t e = rp.entry(i, relations[k]);
      const int64_t at = next[rp.pair[e]]++;
      m.indices[at] = indices[k];
      m.values[at] = static_cast<float>(1.0 / static_cast<double>(rp.degree[e]));
    }
  }
  return m;
}

}  // namespace

RelationAdjacency::RelationAdjacency(const Part& part, const RelationFirstLayout* first,
                                     const Device& device) {
  ADAQP_CHECK(part.num_relations >= 1,
              "a relation adjacency of a part without node types and relations");
  const int64_t owned = part.num_owned();
  const int32_t relations = part.num_relations;
  RowPairs rp;
  std::vector<int64_t> per_relation(static_cast<size_t>(relations), 0);
  std::vector<int32_t> row;  // one row's edge relations
  for (int64_t i = 0; i < owned; ++i) {
    row.clear();
    for (int64_t k = part.local_indptr[i]; k < part.local_indptr[i + 1]; ++k)
      row.push_back(part.local_relations[k]);
    for (int64_t k = part.halo_indptr[i]; k < part.halo_indptr[i + 1]; ++k)
      row.push_back(part.halo_relations[k]);
    std::sort(row.begin(), row.end());
    for (size_t a = 0; a < row.size();) {
      size_t b = a;
      while (b < row.size() && row[b] == row[a]) ++b;
      ADAQP_CHECK(row[a] >= 0 && row[a] < relations,
                  "edge relation " + std::to_string(row[a]) + " of " + std::to_string(relations));
      rp.relation.push_back(row[a]);
      rp.degree.push_back(static_cast<int64_t>(b - a));
      ++per_relation[row[a]];
      a = b;
    }
    rp.row_begin.push_back(static_cast<int64_t>(rp.relation.size()));
  }
  pair_offsets_.assign(1, 0);
  for (int32_t r = 0; r < relations; ++r)
    pair_offsets_.push_back(pair_offsets_[r] + per_relation[r]);
  // Rows ascending within each relation's run.
  std::vector<int64_t> next(pair_offsets_.begin(), pair_offsets_.end() - 1);
  rp.pair.resize(rp.relation.size());
  for (size_t k = 0; k < rp.relation.size(); ++k) rp.pair[k] = next[rp.relation[k]]++;
  const int64_t pairs = num_pairs();
  ADAQP_CHECK(pairs <= std::numeric_limits<int32_t>::max(),
              std::to_string(pairs) + " (node, relation) pairs: more than 32-bit columns index");
  kernels::CsrMatrix local = pair_block(part.local_indptr, part.local_indices, part.local_relations,
                                        owned, rp, owned, pairs);
  kernels::CsrMatrix halo = pair_block(part.halo_indptr, part.halo_indices, part.halo_relations,
                                       part.num_halo(), rp, owned, pairs);
  // combine: row i holds its pairs, in relation order (its entries).
  kernels::CsrMatrix combine;
  combine.rows = owned;
  combine.cols = pairs;
  combine.indptr = rp.row_begin;
  combine.indices.assign(rp.pair.begin(), rp.pair.end());
  combine.values.assign(static_cast<size_t>(pairs), 1.0F);
  local_t_ = AdjacencyBlock::transpose(local.view(), device);
  if (first == nullptr) halo_t_ = AdjacencyBlock::transpose(halo.view(), device);
  combine_t_ = AdjacencyBlock::transpose(combine.view(), device);
  local_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(local), device);
  halo_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(halo), device);
  combine_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(combine), device);
  if (first != nullptr) build_sender(part, *first, device);
}

void RelationAdjacency::build_sender(const Part& part, const RelationFirstLayout& first,
                                     const Device& device) {
  const int32_t relations = part.num_relations;
  const int64_t pairs = first.num_pairs(), sends = first.boundary.sends();
  ADAQP_CHECK(pairs <= std::numeric_limits<int32_t>::max(),
              std::to_string(pairs) + " sent pairs: more than 32-bit columns index");
  // The sent pairs ordered by relation, then by sent row (the layout's order within a relation).
  send_pair_offsets_.assign(static_cast<size_t>(relations) + 1, 0);
  for (const int32_t r : first.pair_relation) {
    ADAQP_CHECK(r >= 0 && r < relations,
                "sent pair relation " + std::to_string(r) + " of " + std::to_string(relations));
    ++send_pair_offsets_[r + 1];
  }
  for (int32_t r = 0; r < relations; ++r) send_pair_offsets_[r + 1] += send_pair_offsets_[r];
  std::vector<int64_t> next(send_pair_offsets_.begin(), send_pair_offsets_.end() - 1);
  std::vector<int64_t> order(static_cast<size_t>(pairs));  // layout pair -> ordered pair
  for (int64_t p = 0; p < pairs; ++p) order[p] = next[first.pair_relation[p]]++;
  kernels::CsrMatrix send;
  send.rows = pairs;
  send.cols = part.num_owned();
  send.indptr.assign(static_cast<size_t>(pairs) + 1, 0);
  for (int64_t p = 0; p < pairs; ++p)
    send.indptr[order[p] + 1] = first.pair_indptr[p + 1] - first.pair_indptr[p];
  for (int64_t p = 0; p < pairs; ++p) send.indptr[p + 1] += send.indptr[p];
  send.indices.resize(first.pair_sources.size());
  send.values.resize(first.pair_sources.size());
  for (int64_t p = 0; p < pairs; ++p) {
    const auto weight = static_cast<float>(1.0 / static_cast<double>(first.pair_degree[p]));
    int64_t at = send.indptr[order[p]];
    for (int64_t e = first.pair_indptr[p]; e < first.pair_indptr[p + 1]; ++e, ++at) {
      send.indices[at] = first.pair_sources[e];
      send.values[at] = weight;
    }
    std::sort(send.indices.begin() + send.indptr[order[p]], send.indices.begin() + at);
  }
  // Sent row k holds its pairs (the layout lists a row's pairs together).
  kernels::CsrMatrix combine;
  combine.rows = sends;
  combine.cols = pairs;
  combine.indptr.assign(static_cast<size_t>(sends) + 1, 0);
  for (int64_t p = 0; p < pairs; ++p) ++combine.indptr[first.pair_row[p] + 1];
  for (int64_t k = 0; k < sends; ++k) combine.indptr[k + 1] += combine.indptr[k];
  combine.indices.resize(static_cast<size_t>(pairs));
  for (int64_t p = 0; p < pairs; ++p) combine.indices[p] = static_cast<int32_t>(order[p]);
  combine.values.assign(static_cast<size_t>(pairs), 1.0F);
  // The received rows into their owned rows: the layout's block.
  kernels::CsrMatrix received;
  received.rows = part.num_owned();
  received.cols = first.boundary.recvs();
  received.indptr = first.halo_indptr;
  received.indices = first.halo_indices;
  received.values = first.halo_values;
  send_t_ = AdjacencyBlock::transpose(send.view(), device);
  send_combine_t_ = AdjacencyBlock::transpose(combine.view(), device);
  received_t_ = AdjacencyBlock::transpose(received.view(), device);
  send_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(send), device);
  send_combine_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(combine), device);
  received_ = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(received), device);
}

PairFeatures RelationAdjacency::without_zero_pairs(const at::Tensor& z,
                                                   const Device& device) const {
  ADAQP_CHECK_EQ(z.size(0), num_pairs(), "rows of the pairs' features");
  const at::Tensor nonzero = z.ne(0).any(1).to(at::kCPU).contiguous();
  const bool* keep = nonzero.data_ptr<bool>();
  PairFeatures out;
  std::vector<int64_t> kept, new_of(static_cast<size_t>(num_pairs()), -1);
  out.offsets.assign(1, 0);
  for (int32_t r = 0; r < num_relations(); ++r) {
    for (int64_t p = pair_offsets_[r]; p < pair_offsets_[r + 1]; ++p) {
      if (!keep[p]) continue;
      new_of[p] = static_cast<int64_t>(kept.size());
      kept.push_back(p);
    }
    out.offsets.push_back(static_cast<int64_t>(kept.size()));
  }
  // The combine block's columns renumbered (ascending still: new_of is monotone), dropped ones cut.
  const kernels::CsrView& all = combine_->view();
  kernels::CsrMatrix combine;
  combine.rows = all.rows;
  combine.cols = static_cast<int64_t>(kept.size());
  combine.indptr.assign(static_cast<size_t>(all.rows) + 1, 0);
  for (int64_t i = 0; i < all.rows; ++i) {
    for (int64_t k = all.indptr[i]; k < all.indptr[i + 1]; ++k) {
      const int64_t c = new_of[all.indices[k]];
      if (c >= 0) combine.indices.push_back(static_cast<int32_t>(c));
    }
    combine.indptr[i + 1] = static_cast<int64_t>(combine.indices.size());
  }
  combine.values.assign(combine.indices.size(), 1.0F);
  out.rows = z.index_select(0, to_device(kept, device));
  out.combine_t = AdjacencyBlock::transpose(combine.view(), device);
  out.combine = std::make_unique<AdjacencyBlock>(kernels::CsrView{}, std::move(combine), device);
  return out;
}

RelationAdjacency::~RelationAdjacency() = default;

}  // namespace adaqp
