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
  // The median time of each size (the mean of the middle two for an even count).
  std::vector<TimingSample> sorted = samples;
  std::sort(sorted.begin(), sorted.end(), [](const TimingSample& a, const TimingSample& b) {
    return a.bytes != b.bytes ? a.bytes < b.bytes : a.seconds < b.seconds;
  });
  std::vector<TimingSample> medians;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j].bytes == sorted[i].bytes) ++j;
    const size_t mid = i + (j - i) / 2;
    const double median = (j - i) % 2 == 1 ? sorted[mid].seconds
                                           : (sorted[mid - 1].seconds + sorted[mid].seconds) / 2;
    medians.push_back({sorted[i].bytes, median});
    i = j;
  }
  // Weighted least squares through the medians, weight 1 / median^2 (relative errors), or 1 if a
  // median is not positive.
  const bool relative = std::all_of(medians.begin(), medians.end(),
                                    [](const TimingSample& m) { return m.seconds > 0; });
  double total = 0, mean_x = 0, mean_y = 0;
  for (const TimingSample& m : medians) {
    const double w = relative ? 1 / (m.seconds * m.seconds) : 1;
    total += w;
    mean_x += w * static_cast<double>(m.bytes);
    mean_y += w * m.seconds;
  }
  mean_x /= total;
  mean_y /= total;
  double sxx = 0, sxy = 0;
  for (const TimingSample& m : medians) {
    const double w = relative ? 1 / (m.seconds * m.seconds) : 1;
    const double dx = static_cast<double>(m.bytes) - mean_x;
    sxx += w * dx * dx;
    sxy += w * dx * (m.seconds - mean_y);
  }
  LinkFit fit;
  fit.beta = sxy / sxx;
  fit.alpha = mean_y - fit.beta * mean_x;
  fit.samples = static_cast<int64_t>(samples.size());
  // R^2 of the line against every sample (not the medians): how much of the spread it explains.
  double sample_mean = 0;
  for (const TimingSample& s : samples) sample_mean += s.seconds;
  sample_mean /= static_cast<double>(samples.size());
  double residual = 0, syy = 0;
  for (const TimingSample& s : samples) {
    const double r = s.seconds - (fit.alpha + fit.beta * static_cast<double>(s.bytes));
    residual += r * r;
    syy += (s.seconds - sample_mean) * (s.seconds - sample_mean);
  }
  fit.r2 = syy > 0 ? 1 - residual / syy : 1;
  return fit;
}

std::vector<LinkCost> plan_costs(const std::vector<LinkFit>& fits, int classes) {
  std::vector<double> fallback(static_cast<size_t>(classes), 0.0);
  for (size_t c = 0; c < fits.size(); ++c) {
    double& f = fallback[c % static_cast<size_t>(classes)];
    f = std::max(f, fits[c].beta);
  }
  std::vector<LinkCost> costs;
  for (size_t c = 0; c < fits.size(); ++c) {
    const double f = fallback[c % static_cast<size_t>(classes)];
    costs.push_back({std::max(fits[c].alpha, 0.0),
                     fits[c].beta > 0 ? fits[c].beta : (f > 0 ? f : kFallbackBeta)});
  }
  return costs;
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
