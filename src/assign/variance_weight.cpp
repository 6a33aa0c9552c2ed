#include "adaqp/assign/variance_weight.h"

#include <string>

#include "adaqp/common/error.h"

namespace adaqp::assign {

double forward_variance_weight(double coeff_sq_sum, int64_t row_width, double range) {
  ADAQP_CHECK_GE(coeff_sq_sum, 0.0, "coefficient square sum");
  return coeff_sq_sum * backward_variance_weight(row_width, range);
}

double backward_variance_weight(int64_t row_width, double range) {
  ADAQP_CHECK(row_width >= 1 && range >= 0,
              "row width " + std::to_string(row_width) + ", range " + std::to_string(range));
  return static_cast<double>(row_width) * range * range / 6.0;
}

}  // namespace adaqp::assign
