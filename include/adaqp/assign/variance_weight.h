// The variance weights w_j of the solver's objective (docs/design.md, section 6). Quantizing a row
// of width d and range (max - min) to b bits adds about d * range^2 / 6 / (2^b - 1)^2 variance
// (values spread evenly inside their buckets); a message's weight scales that by how it enters
// the receiver's output.
#pragma once

#include <cstdint>

namespace adaqp::assign {

// Forward message j: it enters every receiving row i with coefficient a_ij, so
// w_j = (sum_i a_ij^2) * d * range^2 / 6. coeff_sq_sum >= 0, row_width >= 1, range >= 0.
double forward_variance_weight(double coeff_sq_sum, int64_t row_width, double range);

// Backward message (a partial gradient added into its owner's input gradient with coefficient 1):
// w_j = d * range^2 / 6.
double backward_variance_weight(int64_t row_width, double range);

}  // namespace adaqp::assign
