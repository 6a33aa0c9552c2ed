#include "adaqp/train/metrics_record.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/quant/widths.h"

namespace adaqp {

namespace {

using Json = nlohmann::ordered_json;

Json finite(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

Json by_direction(const Json& fwd, const Json& bwd) {
  Json j = Json::object();
  j["fwd"] = fwd;
  j["bwd"] = bwd;
  return j;
}

// What a field holds, and so how it is packed (doubles: integers below 2^53 are exact) and written.
enum class Kind {
  kReal,      // one double; null in JSON when not finite
  kInt,       // one integer
  kBool,      // one flag
  kRealPair,  // per layer, forward and backward: 2 x layers doubles
  kIntPair,   // per layer, forward and backward: 2 x layers integers
  kHistPair   // per layer and reported width, forward and backward: 2 x layers x kNumMessageWidths
};

// When a field appears in metrics.jsonl.
enum class Emit { kAlways, kEvaluated, kAdaptive, kPositive, kNever };

// The values of a field: one (a scalar) or the forward then the backward vector. A pair's vectors
// are empty where the record holds none (the adaptive scheme's, in a record without it).
struct Values {
  double scalar = 0;
  std::vector<double> fwd, bwd;

  static Values of(double v) {
    Values x;
    x.scalar = v;
    return x;
  }
  static Values of(std::vector<double> f, std::vector<double> b) {
    Values x;
    x.fwd = std::move(f);
    x.bwd = std::move(b);
    return x;
  }
};

// One field of an epoch record: the one list of EpochRecord's contents (pack, unpack and JSON
// follow it, in its order).
struct Field {
  const char* key;  // in metrics.jsonl
  Kind kind;
  Emit emit;
  Values (*get)(const EpochRecord&);
  void (*set)(EpochRecord&, const Values&);
};

template <typename T>
std::vector<double> reals(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

template <typename T>
std::vector<T> typed(const std::vector<double>& v) {
  std::vector<T> out(v.size());
  for (size_t k = 0; k < v.size(); ++k) out[k] = static_cast<T>(v[k]);
  return out;
}

using Hist = std::vector<std::array<int64_t, quant::kNumMessageWidths>>;

std::vector<double> flat(const Hist& h) {
  std::vector<double> v;
  for (const auto& layer : h) v.insert(v.end(), layer.begin(), layer.end());
  return v;
}

Hist unflat(const std::vector<double>& v) {
  Hist h(v.size() / quant::kNumMessageWidths);
  for (size_t k = 0; k < v.size(); ++k) {
    h[k / quant::kNumMessageWidths][k % quant::kNumMessageWidths] = static_cast<int64_t>(v[k]);
  }
  return h;
}

// A scalar field at MEMBER (an lvalue expression of EpochRecord r).
#define ADAQP_SCALAR(KEY, KIND, EMIT, MEMBER)                                                      \
  Field {                                                                                          \
    KEY, KIND, EMIT, [](const EpochRecord& r) { return Values::of(static_cast<double>(MEMBER)); }, \
        [](EpochRecord& r, const Values& v) {                                                      \
          MEMBER = static_cast<std::remove_reference_t<decltype(MEMBER)>>(v.scalar);               \
        }                                                                                          \
  }
// A pair of per-layer vectors FWD, BWD (lvalue expressions of EpochRecord r) converted by TO and
// FROM.
#define ADAQP_PAIR(KEY, KIND, EMIT, FWD, BWD, TO, FROM)                                 \
  Field {                                                                               \
    KEY, KIND, EMIT, [](const EpochRecord& r) { return Values::of(TO(FWD), TO(BWD)); }, \
        [](EpochRecord& r, const Values& v) {                                           \
          FWD = FROM(v.fwd);                                                            \
          BWD = FROM(v.bwd);                                                            \
        }                                                                               \
  }

const Field kFields[] = {
    ADAQP_SCALAR("adaptive", Kind::kBool, Emit::kNever, r.stats.adaptive),
    ADAQP_SCALAR("evaluated", Kind::kBool, Emit::kNever, r.evaluated),
    ADAQP_SCALAR("epoch", Kind::kInt, Emit::kAlways, r.stats.epoch),
    ADAQP_SCALAR("rank", Kind::kInt, Emit::kAlways, r.rank),
    ADAQP_SCALAR("loss", Kind::kReal, Emit::kAlways, r.stats.loss),
    ADAQP_SCALAR("epoch_time_s", Kind::kReal, Emit::kAlways, r.stats.epoch_time_s),
    ADAQP_SCALAR("compute_time_s", Kind::kReal, Emit::kAlways, r.stats.compute_time_s),
    ADAQP_SCALAR("local_agg_time_s", Kind::kReal, Emit::kAlways, r.stats.local_agg_time_s),
    ADAQP_SCALAR("halo_agg_time_s", Kind::kReal, Emit::kAlways, r.stats.halo_agg_time_s),
    ADAQP_SCALAR("dense_time_s", Kind::kReal, Emit::kAlways, r.stats.dense_time_s),
    ADAQP_SCALAR("quant_time_s", Kind::kReal, Emit::kAlways, r.stats.quant_time_s),
    ADAQP_SCALAR("codec_setup_time_s", Kind::kReal, Emit::kAlways, r.stats.codec_setup_time_s),
    ADAQP_SCALAR("comm_time_s", Kind::kReal, Emit::kAlways, r.stats.comm_time_s),
    ADAQP_SCALAR("exposed_comm_time_s", Kind::kReal, Emit::kAlways, r.stats.exposed_comm_time_s),
    ADAQP_SCALAR("reduce_time_s", Kind::kReal, Emit::kAlways, r.stats.reduce_time_s),
    ADAQP_SCALAR("bytes_sent", Kind::kInt, Emit::kAlways, r.stats.bytes_sent),
    ADAQP_PAIR("bytes_sent_by_layer", Kind::kIntPair, Emit::kAlways, r.stats.bytes_forward,
               r.stats.bytes_backward, reals, typed<int64_t>),
    ADAQP_SCALAR("train_acc", Kind::kReal, Emit::kEvaluated, r.scores.train),
    ADAQP_SCALAR("val_acc", Kind::kReal, Emit::kEvaluated, r.scores.valid),
    ADAQP_SCALAR("val_loss", Kind::kReal, Emit::kEvaluated, r.scores.valid_loss),
    ADAQP_SCALAR("test_acc", Kind::kReal, Emit::kEvaluated, r.scores.test),
    ADAQP_PAIR("comm_time_by_layer", Kind::kRealPair, Emit::kAlways, r.stats.comm_forward_s,
               r.stats.comm_backward_s, reals, typed<double>),
    ADAQP_SCALAR("peak_rss_bytes", Kind::kInt, Emit::kAlways, r.stats.peak_rss_bytes),
    ADAQP_SCALAR("device_peak_bytes", Kind::kInt, Emit::kPositive, r.stats.device_peak_bytes),
    ADAQP_SCALAR("assign_time_s", Kind::kReal, Emit::kAdaptive, r.stats.assign.assign_time_s),
    ADAQP_SCALAR("assign_solved", Kind::kBool, Emit::kAdaptive, r.stats.assign.solved),
    ADAQP_SCALAR("assign_background_s", Kind::kReal, Emit::kAdaptive,
                 r.stats.assign.background_solve_s),
    ADAQP_SCALAR("assign_full_precision_given_up", Kind::kBool, Emit::kAdaptive,
                 r.stats.assign.full_precision_given_up),
    ADAQP_SCALAR("assign_vanilla_schedule", Kind::kBool, Emit::kAdaptive,
                 r.stats.assign.vanilla_schedule),
    // Derived (written, never read back): the modelled time of the epoch's exchanges.
    Field{"predicted_comm_time_s", Kind::kReal, Emit::kAdaptive,
          [](const EpochRecord& r) {
            const AssignStats& a = r.stats.assign;
            return Values::of(
                std::accumulate(a.predicted_forward_s.begin(), a.predicted_forward_s.end(), 0.0) +
                std::accumulate(a.predicted_backward_s.begin(), a.predicted_backward_s.end(), 0.0));
          },
          [](EpochRecord&, const Values&) {}},
    ADAQP_PAIR("predicted_comm_time_by_layer", Kind::kRealPair, Emit::kAdaptive,
               r.stats.assign.predicted_forward_s, r.stats.assign.predicted_backward_s, reals,
               typed<double>),
    ADAQP_PAIR("exchange_time_by_layer", Kind::kRealPair, Emit::kAdaptive,
               r.stats.assign.measured_forward_s, r.stats.assign.measured_backward_s, reals,
               typed<double>),
    ADAQP_PAIR("bits_hist", Kind::kHistPair, Emit::kAdaptive, r.stats.assign.hist_forward,
               r.stats.assign.hist_backward, flat, unflat),
    ADAQP_SCALAR("bytes_same_host", Kind::kInt, Emit::kAdaptive, r.stats.assign.same_host_bytes),
    ADAQP_SCALAR("bytes_same_host_full_precision", Kind::kInt, Emit::kAdaptive,
                 r.stats.assign.same_host_full_precision_bytes),
};

#undef ADAQP_SCALAR
#undef ADAQP_PAIR

bool is_pair(Kind k) {
  return k == Kind::kRealPair || k == Kind::kIntPair || k == Kind::kHistPair;
}

// Doubles of one direction of a pair field for a model of n layers.
size_t pair_values(Kind k, size_t n) {
  return k == Kind::kHistPair ? n * quant::kNumMessageWidths : n;
}

bool emitted(const Field& f, const EpochRecord& r, const Values& v) {
  switch (f.emit) {
    case Emit::kAlways:
      return true;
    case Emit::kEvaluated:
      return r.evaluated;
    case Emit::kAdaptive:
      return r.stats.adaptive;
    case Emit::kPositive:
      return v.scalar > 0;
    case Emit::kNever:
      return false;
  }
  return false;
}

Json array(const std::vector<double>& v, Kind kind) {
  Json a = Json::array();
  if (kind == Kind::kHistPair) {
    for (size_t k = 0; k < v.size(); k += quant::kNumMessageWidths) {
      Json layer = Json::array();
      for (int w = 0; w < quant::kNumMessageWidths; ++w)
        layer.push_back(static_cast<int64_t>(v[k + w]));
      a.push_back(layer);
    }
    return a;
  }
  for (double x : v) {
    if (kind == Kind::kIntPair) {
      a.push_back(static_cast<int64_t>(x));
    } else {
      a.push_back(finite(x));
    }
  }
  return a;
}

Json scalar(double v, Kind kind) {
  if (kind == Kind::kInt) return static_cast<int64_t>(v);
  if (kind == Kind::kBool) return v != 0;
  return finite(v);
}

}  // namespace

size_t packed_record_size(int layers) {
  size_t size = 0;
  for (const Field& f : kFields) {
    size += is_pair(f.kind) ? 2 * pair_values(f.kind, static_cast<size_t>(layers)) : 1;
  }
  return size;
}

void pack_record(const EpochRecord& r, int layers, double* out) {
  const auto n = static_cast<size_t>(layers);
  for (const Field& f : kFields) {
    const Values v = f.get(r);
    if (!is_pair(f.kind)) {
      *out++ = v.scalar;
      continue;
    }
    const size_t count = pair_values(f.kind, n);
    for (const std::vector<double>* dir : {&v.fwd, &v.bwd}) {
      // Empty: not held by this record (the adaptive scheme's fields without it).
      ADAQP_CHECK(dir->empty() || dir->size() == count,
                  fmt::format("{}: {} values for a model of {} layers", f.key, dir->size(), n));
      std::fill(out, out + count, 0.0);
      std::copy(dir->begin(), dir->end(), out);
      out += count;
    }
  }
}

EpochRecord unpack_record(const double* in, int layers) {
  const auto n = static_cast<size_t>(layers);
  EpochRecord r;
  for (const Field& f : kFields) {
    Values v;
    if (!is_pair(f.kind)) {
      v.scalar = *in++;
    } else {
      const size_t count = pair_values(f.kind, n);
      // The adaptive scheme's fields exist only in its records (read after the flag, which is
      // the first field).
      const bool held = f.emit != Emit::kAdaptive || r.stats.adaptive;
      if (held) v.fwd.assign(in, in + count);
      if (held) v.bwd.assign(in + count, in + 2 * count);
      in += 2 * count;
    }
    f.set(r, v);
  }
  return r;
}

std::string record_json(const EpochRecord& r) {
  Json j;
  for (const Field& f : kFields) {
    const Values v = f.get(r);
    if (!emitted(f, r, v)) continue;
    j[f.key] = is_pair(f.kind) ? by_direction(array(v.fwd, f.kind), array(v.bwd, f.kind))
                               : scalar(v.scalar, f.kind);
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
  j["first_epoch"] = s.first_epoch;
  j["epochs"] = s.epochs;
  j["best_epoch"] = s.best_epoch;
  j["stopped_early"] = s.stopped_early;
  j["params_epoch"] = s.params_epoch;
  j["world_size"] = s.world_size;
  j["device"] = s.device;
  j["cpu_isa"] = s.cpu_isa;
  j["bytes_per_epoch"] = finite(s.bytes_per_epoch);
  j["full_precision_bytes_per_epoch"] = finite(s.full_precision_bytes_per_epoch);
  j["exchange"] = s.exchange;
  j["rows_per_exchange"] = s.rows_per_exchange;
  j["sparse_features_ranks"] = s.sparse_features_ranks;
  if (s.adaptive) j["bit_shares"] = s.bit_shares;
  j["time_breakdown_s"] = {{"compute", finite(s.compute_s)},
                           {"exposed_comm", finite(s.exposed_comm_s)},
                           {"reduce", finite(s.reduce_s)},
                           {"assign", finite(s.assign_s)},
                           {"quant", finite(s.quant_s)}};
  Json phases = Json::array(), rss = Json::array(), tensors = Json::array(), device = Json::array(),
       used = Json::array();
  bool cuda = false;
  for (int k = 0; k < kPhases; ++k) phases.push_back(phase_name(static_cast<Phase>(k)));
  for (const PhasePeaks& rank : s.memory) {
    Json r = Json::array(), t = Json::array(), d = Json::array(), u = Json::array();
    for (const MemoryPeak& m : rank) {
      r.push_back(m.rss_bytes);
      t.push_back(m.host_tensor_bytes);
      d.push_back(m.device_bytes);
      u.push_back(m.device_used_bytes);
      cuda = cuda || m.device_used_bytes > 0;
    }
    rss.push_back(r);
    tensors.push_back(t);
    device.push_back(d);
    used.push_back(u);
  }
  Json memory;
  memory["phases"] = phases;
  memory["per_phase_peaks"] = s.memory_resets;
  memory["peak_rss_bytes"] = rss;
  memory["host_tensor_peak_bytes"] = tensors;
  if (cuda) {
    memory["device_peak_bytes"] = device;
    memory["device_used_bytes"] = used;
  }
  j["memory"] = memory;
  j["seconds_by_phase"] = s.seconds;  // per rank, in memory.phases order
  return j.dump();
}

std::string link_model_json(const LinkModel& model) {
  Json senders = Json::array();
  for (size_t s = 0; s < model.fits.size(); ++s) {
    const assign::LinkFit& f = model.fits[s];
    Json j;
    j["sender"] = s / model.classes;
    if (model.classes > 1) {
      j["to"] = s % model.classes == assign::kSameHost ? "same_host" : "other_hosts";
    }
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
  j["model"] = model.classes == 1 ? "per_sender" : "per_sender_and_host_class";
  j["probe_time_s"] = finite(model.probe_time_s);
  j["min_bytes"] = model.min_bytes;
  j["max_bytes"] = model.max_bytes;
  j["senders"] = senders;
  return j.dump();
}

}  // namespace adaqp
