// How a part file holds its owned rows' features (docs/data-formats.md, "Partition directory"):
// dense, as the array `features` (rows x dim floats), or, where less than about half of the values
// are non-zero (bag-of-words inputs), as CSR: `feature_indptr` (rows + 1), `feature_columns` and
// `feature_values`. Coauthor Physics' one part is 13 MB that way instead of 1.16 GB. Zero means the
// bits of +0.0, so every value, -0.0 included, reads back as it was written.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "adaqp/common/array_file.h"
#include "adaqp/partition/part.h"
#include "part_checker.h"

namespace adaqp {

// Rows of `dim` features, row i at base + (row_ids[i] or, where row_ids is null, i) * dim, as
// CSR where that encoding is the smaller one, else nothing: counted first, so the CSR is built
// without a dense copy of the rows.
std::optional<FeatureCsr> smaller_as_csr(const float* base, const int64_t* row_ids, int64_t rows,
                                         int64_t dim);

// Adds p's features to `w` in the smaller of the two encodings: p.feature_csr as it is, or
// p.features dense or converted; as views (ArrayFileWriter::add_view) where they are p's own
// arrays: p must outlive w's writing.
void add_part_features(ArrayFileWriter& w, const Part& p);

// Sets p.features (dense) or p.feature_csr to the features `in` holds, one row of p.feat_dim per
// owned node (p.owned_gid: their global ids, for messages); InputError through `check` where both
// or neither encoding is there, sizes or offsets disagree, a row's columns are outside
// [0, feat_dim) or do not ascend, or a value is not finite (as every dataset loader refuses them:
// it would pass for a divergence).
void read_part_features(ArrayFileReader& in, const PartChecker& check, Part& p);

}  // namespace adaqp
