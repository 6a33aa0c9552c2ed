// The row-level steps of GraphTransform (graph.h), shared by the whole graph (graph.cpp) and by
// graph slices (graph_slice.cpp), so that both give the same rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace adaqp {

// Appends the sorted sources [begin, end) of node v's row to `out`, its self-loops replaced by
// exactly one (in sorted position).
inline void append_row_with_one_self_loop(const int64_t* begin, const int64_t* end, int64_t v,
                                          std::vector<int64_t>& out) {
  bool placed = false;
  for (const int64_t* e = begin; e != end; ++e) {
    if (*e == v) continue;
    if (*e > v && !placed) {
      out.push_back(v);
      placed = true;
    }
    out.push_back(*e);
  }
  if (!placed) out.push_back(v);
}

// Scales a feature row to unit L1 norm (absolute values summing to 1: a non-negative row sums to
// 1); a row of zeros stays 0. The absolute sum, because a signed row's plain sum can be near zero
// and would blow the row up.
inline void normalize_row(float* row, int64_t dim) {
  double sum = 0.0;
  for (int64_t j = 0; j < dim; ++j) sum += std::fabs(row[j]);
  if (sum == 0.0) return;
  for (int64_t j = 0; j < dim; ++j) row[j] = static_cast<float>(row[j] / sum);
}

// Removes repeated entries of every (sorted) row of the CSR (indptr, indices) in place.
inline void drop_repeated_row_entries(std::vector<int64_t>& indptr, std::vector<int64_t>& indices) {
  int64_t out = 0, row_begin = 0;
  for (size_t v = 0; v + 1 < indptr.size(); ++v) {
    const int64_t row_end = indptr[v + 1];
    for (int64_t e = row_begin; e < row_end; ++e)
      if (e == row_begin || indices[e] != indices[e - 1]) indices[out++] = indices[e];
    row_begin = row_end;
    indptr[v + 1] = out;
  }
  indices.resize(static_cast<size_t>(out));
}

}  // namespace adaqp
