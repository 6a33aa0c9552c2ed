#include "adaqp/assign/link_fit.h"

#include <algorithm>
#include <cmath>

#include "adaqp/common/error.h"

namespace adaqp::assign {

LinkFit fit_link(const std::vector<TimingSample>& samples, const std::string& link) {
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].bytes < 0 || !std::isfinite(samples[i].seconds)) {
      throw InputError(link, "sample " + std::to_string(i),
                       std::to_string(samples[i].bytes) + " bytes, " +
                           std::to_string(samples[i].seconds) + " s");
    }
  }
  const bool distinct = std::any_of(samples.begin(), samples.end(), [&](const TimingSample& s) {
    return s.bytes != samples.front().bytes;
  });
  if (!distinct) {
    throw InputError(link, "",
                     "cannot fit t = alpha + beta * bytes to " + std::to_string(samples.size()) +
                         " samples: need at least 2 distinct message sizes");
  }
  const double n = static_cast<double>(samples.size());
  double mean_x = 0, mean_y = 0;
  for (const TimingSample& s : samples) {
    mean_x += static_cast<double>(s.bytes);
    mean_y += s.seconds;
  }
  mean_x /= n;
  mean_y /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (const TimingSample& s : samples) {
    const double dx = static_cast<double>(s.bytes) - mean_x, dy = s.seconds - mean_y;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  LinkFit fit;
  fit.beta = sxy / sxx;
  fit.alpha = mean_y - fit.beta * mean_x;
  fit.samples = static_cast<int64_t>(samples.size());
  double residual = 0;
  for (const TimingSample& s : samples) {
    const double r = s.seconds - (fit.alpha + fit.beta * static_cast<double>(s.bytes));
    residual += r * r;
  }
  fit.r2 = syy > 0 ? 1 - residual / syy : 1;
  return fit;
}

LinkCost link_cost(const LinkFit& fit, const std::string& link) {
  if (!(fit.beta > 0)) {
    throw InputError(link, "",
                     "fitted time per byte " + std::to_string(fit.beta) +
                         " is not positive: times do not grow with size (probe a wider "
                         "size range)");
  }
  return {std::max(fit.alpha, 0.0), fit.beta};
}

std::vector<int64_t> probe_sizes(int64_t min_bytes, int64_t max_bytes, int count) {
  if (min_bytes < 1 || max_bytes <= min_bytes || count < 2) {
    throw ConfigError("assign: probe sizes: need 1 <= min_bytes < max_bytes and count >= 2, got " +
                      std::to_string(min_bytes) + ", " + std::to_string(max_bytes) + ", " +
                      std::to_string(count));
  }
  const double ratio = static_cast<double>(max_bytes) / static_cast<double>(min_bytes);
  std::vector<int64_t> sizes;
  for (int k = 0; k < count; ++k) {
    const int64_t size = k + 1 == count
                             ? max_bytes
                             : std::llround(static_cast<double>(min_bytes) *
                                            std::pow(ratio, static_cast<double>(k) / (count - 1)));
    if (sizes.empty() || size > sizes.back()) sizes.push_back(size);
  }
  return sizes;
}

}  // namespace adaqp::assign
