// How a part file holds its owned rows' features (docs/data-formats.md, "Partition directory"):
// dense, as the array `features` (rows x dim floats), or, where less than about half of the values
// are non-zero (bag-of-words inputs), as CSR: `feature_indptr` (rows + 1), `feature_columns` and
// `feature_values`. Coauthor Physics' one part is 13 MB that way instead of 1.16 GB. Zero means the
// bits of +0.0, so every value, -0.0 included, reads back as it was written.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/common/array_file.h"
#include "adaqp/partition/part.h"
#include "part_checker.h"

namespace adaqp {

// Adds `features` (rows x dim, row-major) to `w` in the smaller of the two encodings; dense, as a
// view (ArrayFileWriter::add_view): `features` must outlive w's writing.
void add_part_features(ArrayFileWriter& w, const std::vector<float>& features, int64_t rows,
                       int64_t dim);

// Sets p.features (dense) or p.feature_csr to the features `in` holds, one row of p.feat_dim per
// owned node (p.owned_gid: their global ids, for messages); InputError through `check` where both
// or neither encoding is there, sizes or offsets disagree, a row's columns are outside
// [0, feat_dim) or do not ascend, or a value is not finite (as every dataset loader refuses them:
// it would pass for a divergence).
void read_part_features(ArrayFileReader& in, const PartChecker& check, Part& p);

}  // namespace adaqp
