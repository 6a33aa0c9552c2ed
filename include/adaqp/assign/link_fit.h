// Fitting the per-channel cost model t = alpha + beta * bytes (time_model.h) to measured
// exchanges, and the message sizes to measure. Probing itself happens in the runtime.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/assign/time_model.h"

namespace adaqp::assign {

struct TimingSample {
  int64_t bytes = 0;
  double seconds = 0;
};

// The line through the samples, robust to the outliers of a shared machine (a probe delayed by a
// descheduled process): the median time of each distinct size (repeats of a size are the
// samples' point), then the weighted least-squares line through those medians with weights
// 1 / median^2, i.e. fitted on relative errors, because probe sizes span decades and the solver
// compares small and large exchanges alike (plain least squares if a median is not positive).
struct LinkFit {
  double alpha = 0;  // intercept, seconds (may be negative: noise)
  double beta = 0;   // slope, seconds per byte (may be <= 0: noise or too small a size range)
  double r2 = 0;     // coefficient of determination over all samples; 1 when all lie on the line
  int64_t samples = 0;
};

// Throws InputError naming `link` (e.g. "link 0->1") if the samples have fewer than 2 distinct
// sizes, a negative size or a non-finite time.
LinkFit fit_link(const std::vector<TimingSample>& samples, const std::string& link);

// The costs to plan with, one per channel of `fits` (channel c is of link class c % classes): alpha
// clamped at 0 (a negative intercept is noise); a slope that is not positive (times that do not
// grow with size: noise, or too narrow a size range) replaced by the largest slope of its class's
// channels, or by kFallbackBeta where none has a positive one.
constexpr double kFallbackBeta = 1e-9;  // seconds per byte: 1 GB/s
std::vector<LinkCost> plan_costs(const std::vector<LinkFit>& fits, int classes);

// `count` distinct sizes from min_bytes to max_bytes (both included), spaced geometrically and
// rounded to whole bytes, ascending; fewer when the range holds fewer distinct integers.
// ConfigError unless 1 <= min_bytes < max_bytes and count >= 2.
std::vector<int64_t> probe_sizes(int64_t min_bytes, int64_t max_bytes, int count);

}  // namespace adaqp::assign
