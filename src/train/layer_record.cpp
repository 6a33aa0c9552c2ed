#include "adaqp/train/layer_record.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <numeric>

namespace adaqp {

namespace {

// Layout: adaptive flag, assign time, solved flag, then per layer: measured fwd, measured bwd,
// predicted fwd, predicted bwd, then the histograms (3 per layer) fwd and bwd, then the times
// measured from the last rank's start, fwd and bwd.
constexpr size_t kHeader = 3;

std::string times(const double* v, int layers) {
  return fmt::format("[{}]", fmt::join(v, v + layers, ","));
}

std::string hist(const double* v, int layers) {
  std::string s = "[";
  for (int l = 0; l < layers; ++l) {
    s += fmt::format("{}[{},{},{}]", l == 0 ? "" : ",", static_cast<int64_t>(v[3 * l]),
                     static_cast<int64_t>(v[3 * l + 1]), static_cast<int64_t>(v[3 * l + 2]));
  }
  return s + "]";
}

}  // namespace

size_t layer_record_size(int layers) {
  return kHeader + 12 * static_cast<size_t>(layers);
}

std::vector<double> pack_layer_record(const EpochStats& st, int layers) {
  std::vector<double> v(layer_record_size(layers), 0.0);
  v[0] = st.adaptive ? 1 : 0;
  v[1] = st.assign.assign_time_s;
  v[2] = st.assign.solved ? 1 : 0;
  double* p = v.data() + kHeader;
  for (int l = 0; l < layers; ++l) {
    p[l] = st.comm_forward_s[l];
    p[layers + l] = st.comm_backward_s[l];
    if (!st.adaptive) continue;
    p[2 * layers + l] = st.assign.predicted_forward_s[l];
    p[3 * layers + l] = st.assign.predicted_backward_s[l];
    for (int b = 0; b < 3; ++b) {
      p[4 * layers + 3 * l + b] = static_cast<double>(st.assign.hist_forward[l][b]);
      p[7 * layers + 3 * l + b] = static_cast<double>(st.assign.hist_backward[l][b]);
    }
    p[10 * layers + l] = st.assign.measured_forward_s[l];
    p[11 * layers + l] = st.assign.measured_backward_s[l];
  }
  return v;
}

std::string layer_record_json(const double* packed, int layers) {
  const double* p = packed + kHeader;
  std::string s = fmt::format(",\"comm_time_by_layer\":{{\"fwd\":{},\"bwd\":{}}}", times(p, layers),
                              times(p + layers, layers));
  if (packed[0] == 0) return s;
  const double predicted = std::accumulate(p + 2 * layers, p + 4 * layers, 0.0);
  return s + fmt::format(
                 ",\"assign_time_s\":{},\"assign_solved\":{},\"predicted_comm_time_s\":{},"
                 "\"predicted_comm_time_by_layer\":{{\"fwd\":{},\"bwd\":{}}},"
                 "\"exchange_time_by_layer\":{{\"fwd\":{},\"bwd\":{}}},"
                 "\"bits_hist\":{{\"fwd\":{},\"bwd\":{}}}",
                 packed[1], packed[2] != 0 ? "true" : "false", predicted,
                 times(p + 2 * layers, layers), times(p + 3 * layers, layers),
                 times(p + 10 * layers, layers), times(p + 11 * layers, layers),
                 hist(p + 4 * layers, layers), hist(p + 7 * layers, layers));
}

}  // namespace adaqp
