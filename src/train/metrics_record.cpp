#include "adaqp/train/metrics_record.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

using Json = nlohmann::ordered_json;

// Layout: the scalars below, then per layer (each a block of `layers` values, or 3 * layers for
// the histograms) in the order of kPerLayer.
enum Scalar : size_t {
  kRank,
  kEvaluated,
  kTrain,
  kValid,
  kTest,
  kEpoch,
  kLoss,
  kEpochTime,
  kCompute,
  kLocalAgg,
  kHaloAgg,
  kDense,
  kQuant,
  kComm,
  kExposed,
  kReduce,
  kBytes,
  kAdaptive,
  kAssignTime,
  kSolved,
  kPeakRss,
  kDevicePeak,
  kScalars
};
// Blocks per layer: bytes fwd, bwd; comm fwd, bwd; predicted fwd, bwd; measured fwd, bwd (one
// value each), then the histograms fwd, bwd (three values each).
constexpr size_t kBlocks = 8;
constexpr size_t kHistValues = 6;

Json finite(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

Json by_direction(const Json& fwd, const Json& bwd) {
  Json j = Json::object();
  j["fwd"] = fwd;
  j["bwd"] = bwd;
  return j;
}

template <typename T>
Json array(const std::vector<T>& v) {
  Json a = Json::array();
  for (const T& x : v) {
    if constexpr (std::is_floating_point_v<T>) {
      a.push_back(finite(x));
    } else {
      a.push_back(x);
    }
  }
  return a;
}

Json hist(const std::vector<std::array<int64_t, 3>>& h) {
  Json a = Json::array();
  for (const auto& layer : h) a.push_back({layer[0], layer[1], layer[2]});
  return a;
}

}  // namespace

size_t packed_record_size(int layers) {
  return kScalars + (kBlocks + kHistValues) * static_cast<size_t>(layers);
}

void pack_record(const EpochRecord& r, int layers, double* out) {
  const EpochStats& s = r.stats;
  const auto n = static_cast<size_t>(layers);
  ADAQP_CHECK(s.bytes_forward.size() == n && s.bytes_backward.size() == n &&
                  s.comm_forward_s.size() == n && s.comm_backward_s.size() == n,
              "epoch record of " + std::to_string(layers) + " layers");
  std::fill(out, out + packed_record_size(layers), 0.0);
  out[kRank] = r.rank;
  out[kEvaluated] = r.evaluated ? 1 : 0;
  out[kTrain] = r.scores.train;
  out[kValid] = r.scores.valid;
  out[kTest] = r.scores.test;
  out[kEpoch] = s.epoch;
  out[kLoss] = s.loss;
  out[kEpochTime] = s.epoch_time_s;
  out[kCompute] = s.compute_time_s;
  out[kLocalAgg] = s.local_agg_time_s;
  out[kHaloAgg] = s.halo_agg_time_s;
  out[kDense] = s.dense_time_s;
  out[kQuant] = s.quant_time_s;
  out[kComm] = s.comm_time_s;
  out[kExposed] = s.exposed_comm_time_s;
  out[kReduce] = s.reduce_time_s;
  out[kBytes] = static_cast<double>(s.bytes_sent);  // exact below 2^53
  out[kAdaptive] = s.adaptive ? 1 : 0;
  out[kAssignTime] = s.assign.assign_time_s;
  out[kSolved] = s.assign.solved ? 1 : 0;
  out[kPeakRss] = static_cast<double>(s.peak_rss_bytes);
  out[kDevicePeak] = static_cast<double>(s.device_peak_bytes);
  double* p = out + kScalars;
  for (size_t l = 0; l < n; ++l) {
    p[l] = static_cast<double>(s.bytes_forward[l]);
    p[n + l] = static_cast<double>(s.bytes_backward[l]);
    p[2 * n + l] = s.comm_forward_s[l];
    p[3 * n + l] = s.comm_backward_s[l];
    if (!s.adaptive) continue;
    p[4 * n + l] = s.assign.predicted_forward_s[l];
    p[5 * n + l] = s.assign.predicted_backward_s[l];
    p[6 * n + l] = s.assign.measured_forward_s[l];
    p[7 * n + l] = s.assign.measured_backward_s[l];
    for (size_t b = 0; b < 3; ++b) {
      p[kBlocks * n + 3 * l + b] = static_cast<double>(s.assign.hist_forward[l][b]);
      p[(kBlocks + 3) * n + 3 * l + b] = static_cast<double>(s.assign.hist_backward[l][b]);
    }
  }
}

EpochRecord unpack_record(const double* in, int layers) {
  const auto n = static_cast<size_t>(layers);
  EpochRecord r;
  EpochStats& s = r.stats;
  r.rank = static_cast<int>(in[kRank]);
  r.evaluated = in[kEvaluated] != 0;
  r.scores = EvalScores{in[kTrain], in[kValid], in[kTest]};
  s.epoch = static_cast<int>(in[kEpoch]);
  s.loss = in[kLoss];
  s.epoch_time_s = in[kEpochTime];
  s.compute_time_s = in[kCompute];
  s.local_agg_time_s = in[kLocalAgg];
  s.halo_agg_time_s = in[kHaloAgg];
  s.dense_time_s = in[kDense];
  s.quant_time_s = in[kQuant];
  s.comm_time_s = in[kComm];
  s.exposed_comm_time_s = in[kExposed];
  s.reduce_time_s = in[kReduce];
  s.bytes_sent = static_cast<int64_t>(in[kBytes]);
  s.adaptive = in[kAdaptive] != 0;
  s.assign.assign_time_s = in[kAssignTime];
  s.assign.solved = in[kSolved] != 0;
  s.peak_rss_bytes = static_cast<int64_t>(in[kPeakRss]);
  s.device_peak_bytes = static_cast<int64_t>(in[kDevicePeak]);
  const double* p = in + kScalars;
  auto ints = [&](size_t block) {
    std::vector<int64_t> v(n);
    for (size_t l = 0; l < n; ++l) v[l] = static_cast<int64_t>(p[block * n + l]);
    return v;
  };
  auto reals = [&](size_t block) {
    return std::vector<double>(p + block * n, p + (block + 1) * n);
  };
  s.bytes_forward = ints(0);
  s.bytes_backward = ints(1);
  s.comm_forward_s = reals(2);
  s.comm_backward_s = reals(3);
  if (s.adaptive) {
    s.assign.predicted_forward_s = reals(4);
    s.assign.predicted_backward_s = reals(5);
    s.assign.measured_forward_s = reals(6);
    s.assign.measured_backward_s = reals(7);
    s.assign.hist_forward.resize(n);
    s.assign.hist_backward.resize(n);
    for (size_t l = 0; l < n; ++l) {
      for (size_t b = 0; b < 3; ++b) {
        s.assign.hist_forward[l][b] = static_cast<int64_t>(p[kBlocks * n + 3 * l + b]);
        s.assign.hist_backward[l][b] = static_cast<int64_t>(p[(kBlocks + 3) * n + 3 * l + b]);
      }
    }
  }
  return r;
}

std::string record_json(const EpochRecord& r) {
  const EpochStats& s = r.stats;
  Json j;
  j["epoch"] = s.epoch;
  j["rank"] = r.rank;
  j["loss"] = finite(s.loss);
  j["epoch_time_s"] = finite(s.epoch_time_s);
  j["compute_time_s"] = finite(s.compute_time_s);
  j["local_agg_time_s"] = finite(s.local_agg_time_s);
  j["halo_agg_time_s"] = finite(s.halo_agg_time_s);
  j["dense_time_s"] = finite(s.dense_time_s);
  j["quant_time_s"] = finite(s.quant_time_s);
  j["comm_time_s"] = finite(s.comm_time_s);
  j["exposed_comm_time_s"] = finite(s.exposed_comm_time_s);
  j["reduce_time_s"] = finite(s.reduce_time_s);
  j["bytes_sent"] = s.bytes_sent;
  j["bytes_sent_by_layer"] = by_direction(array(s.bytes_forward), array(s.bytes_backward));
  if (r.evaluated) {
    j["train_acc"] = finite(r.scores.train);
    j["val_acc"] = finite(r.scores.valid);
    j["test_acc"] = finite(r.scores.test);
  }
  j["comm_time_by_layer"] = by_direction(array(s.comm_forward_s), array(s.comm_backward_s));
  j["peak_rss_bytes"] = s.peak_rss_bytes;
  if (s.device_peak_bytes > 0) j["device_peak_bytes"] = s.device_peak_bytes;
  if (s.adaptive) {
    const AssignStats& a = s.assign;
    const double predicted =
        std::accumulate(a.predicted_forward_s.begin(), a.predicted_forward_s.end(), 0.0) +
        std::accumulate(a.predicted_backward_s.begin(), a.predicted_backward_s.end(), 0.0);
    j["assign_time_s"] = finite(a.assign_time_s);
    j["assign_solved"] = a.solved;
    j["predicted_comm_time_s"] = finite(predicted);
    j["predicted_comm_time_by_layer"] =
        by_direction(array(a.predicted_forward_s), array(a.predicted_backward_s));
    j["exchange_time_by_layer"] =
        by_direction(array(a.measured_forward_s), array(a.measured_backward_s));
    j["bits_hist"] = by_direction(hist(a.hist_forward), hist(a.hist_backward));
  }
  return j.dump();
}

std::string summary_json(const RunSummary& s) {
  Json j;
  j["event"] = "summary";
  j["best_val_acc"] = finite(s.best_val_acc);
  j["test_acc_at_best_val"] = finite(s.test_acc_at_best_val);
  j["final_test_acc"] = finite(s.final_test_acc);
  j["mean_epoch_time_s"] = finite(s.mean_epoch_time_s);
  j["epochs_per_s"] = finite(s.epochs_per_s);
  j["metric"] = s.metric;
  j["epochs"] = s.epochs;
  j["world_size"] = s.world_size;
  j["device"] = s.device;
  j["bytes_per_epoch"] = finite(s.bytes_per_epoch);
  j["full_precision_bytes_per_epoch"] = finite(s.full_precision_bytes_per_epoch);
  if (s.adaptive) j["bit_shares"] = {s.bit_shares[0], s.bit_shares[1], s.bit_shares[2]};
  j["time_breakdown_s"] = {{"compute", finite(s.compute_s)},
                           {"exposed_comm", finite(s.exposed_comm_s)},
                           {"reduce", finite(s.reduce_s)},
                           {"assign", finite(s.assign_s)},
                           {"quant", finite(s.quant_s)}};
  Json phases = Json::array(), rss = Json::array(), device = Json::array(), used = Json::array();
  bool cuda = false;
  for (int k = 0; k < kPhases; ++k) phases.push_back(phase_name(static_cast<Phase>(k)));
  for (const PhasePeaks& rank : s.memory) {
    Json r = Json::array(), d = Json::array(), u = Json::array();
    for (const MemoryPeak& m : rank) {
      r.push_back(m.rss_bytes);
      d.push_back(m.device_bytes);
      u.push_back(m.device_used_bytes);
      cuda = cuda || m.device_used_bytes > 0;
    }
    rss.push_back(r);
    device.push_back(d);
    used.push_back(u);
  }
  Json memory;
  memory["phases"] = phases;
  memory["per_phase_peaks"] = s.memory_resets;
  memory["peak_rss_bytes"] = rss;
  if (cuda) {
    memory["device_peak_bytes"] = device;
    memory["device_used_bytes"] = used;
  }
  j["memory"] = memory;
  return j.dump();
}

std::string link_model_json(const LinkModel& model) {
  Json senders = Json::array();
  for (size_t s = 0; s < model.fits.size(); ++s) {
    const assign::LinkFit& f = model.fits[s];
    Json j;
    j["sender"] = s;
    j["alpha_s"] = finite(f.alpha);
    j["beta_s_per_byte"] = finite(f.beta);
    j["r2"] = finite(f.r2);
    j["samples"] = f.samples;
    j["planned_alpha_s"] = finite(model.costs[s].alpha);
    j["planned_beta_s_per_byte"] = finite(model.costs[s].beta);
    senders.push_back(j);
  }
  Json j;
  j["event"] = "link_model";
  j["model"] = "per_sender";
  j["probe_time_s"] = finite(model.probe_time_s);
  j["min_bytes"] = model.min_bytes;
  j["max_bytes"] = model.max_bytes;
  j["senders"] = senders;
  return j.dump();
}

}  // namespace adaqp
