#include "adaqp/model/dist_graph.h"

#include <chrono>
#include <cmath>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

float weight(Aggregation agg, int64_t in_deg_dst, int64_t out_deg_src) {
  if (agg == Aggregation::kMean) return static_cast<float>(1.0 / static_cast<double>(in_deg_dst));
  return static_cast<float>(
      1.0 / std::sqrt(static_cast<double>(in_deg_dst) * static_cast<double>(out_deg_src)));
}

// Values of one block (local or halo) of the normalised adjacency.
std::vector<float> block_values(Aggregation agg, const std::vector<int64_t>& indptr,
                                const std::vector<int32_t>& indices,
                                const std::vector<int64_t>& in_deg,
                                const std::vector<int64_t>& col_out_deg) {
  std::vector<float> values(indices.size());
  const int64_t rows = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      values[k] = weight(agg, in_deg[i], col_out_deg[indices[k]]);
    }
  }
  return values;
}

}  // namespace

Aggregation aggregation_for_model(const std::string& model_type) {
  if (model_type == "gcn") return Aggregation::kGcn;
  if (model_type == "sage") return Aggregation::kMean;
  throw ConfigError("model.type: unknown model '" + model_type + "' (expected gcn or sage)");
}

DistGraph::DistGraph(Part part, Communicator& comm, const DistGraphOptions& opt)
    : part_(std::move(part)),
      comm_(comm),
      opt_(opt),
      exchanger_(part_, comm, HaloExchangerOptions{opt.overlap}) {
  const int64_t owned = part_.num_owned();
  local_values_ = block_values(opt_.aggregation, part_.local_indptr, part_.local_indices,
                               part_.owned_in_degree, part_.owned_out_degree);
  halo_values_ = block_values(opt_.aggregation, part_.halo_indptr, part_.halo_indices,
                              part_.owned_in_degree, part_.halo_out_degree);
  a_local_ = kernels::CsrView{owned, owned, part_.local_indptr.data(), part_.local_indices.data(),
                              local_values_.data()};
  a_halo_ = kernels::CsrView{owned, part_.num_halo(), part_.halo_indptr.data(),
                             part_.halo_indices.data(), halo_values_.data()};
  a_local_t_ = kernels::transpose_csr(a_local_);
  a_halo_t_ = kernels::transpose_csr(a_halo_);
  if (opt_.cache_features) {
    halo_features_.resize(static_cast<size_t>(part_.num_halo() * part_.feat_dim));
    exchanger_.start_forward(part_.features.data(), part_.feat_dim, halo_features_.data(),
                             ExchangeId{0, Direction::kForward}, Precision{});
    exchanger_.finish_forward();
    exchanger_.reset_stats();
  }
}

void DistGraph::set_quant_plan(QuantPlan plan) {
  plan_ = std::move(plan);
  quantize_ = true;
}

void DistGraph::clear_quant_plan() {
  quantize_ = false;
}

void DistGraph::reset_comm_stats() {
  exchanger_.reset_stats();
  agg_stats_ = AggregationStats{};
}

const MessageTrace* DistGraph::message_trace(int layer, Direction dir) const {
  const std::vector<MessageTrace>& traces = traces_[static_cast<int>(dir)];
  if (static_cast<size_t>(layer) >= traces.size() || traces[layer].width == 0) return nullptr;
  return &traces[layer];
}

Precision DistGraph::precision(int layer, Direction dir, int64_t d) {
  Precision p;
  const std::vector<MessageBits>& bits =
      dir == Direction::kForward ? plan_.forward : plan_.backward;
  if (!quantize_ || static_cast<size_t>(layer) >= bits.size()) return p;
  p.bits = &bits[layer];
  p.key.seed = plan_.seed;
  p.key.epoch = plan_.epoch;
  if (plan_.trace_ranges) {
    std::vector<MessageTrace>& traces = traces_[static_cast<int>(dir)];
    if (traces.size() <= static_cast<size_t>(layer)) traces.resize(layer + 1);
    traces[layer].width = d;
    traces[layer].ranges.resize(bits[layer].send.size());
    p.ranges = traces[layer].ranges.data();
  }
  return p;
}

void DistGraph::aggregate(const float* h, int64_t d, float* y, int layer) {
  halo_buf_.resize(static_cast<size_t>(part_.num_halo() * d));
  exchanger_.start_forward(h, d, halo_buf_.data(), ExchangeId{layer, Direction::kForward},
                           precision(layer, Direction::kForward, d));
  const double t0 = now_s();
  kernels::spmm_cpu(a_local_, h, d, y, /*accumulate=*/false);
  agg_stats_.local_done_s = now_s();
  agg_stats_.local_agg_time_s += agg_stats_.local_done_s - t0;
  exchanger_.finish_forward();
  const double t1 = now_s();
  kernels::spmm_cpu(a_halo_, halo_buf_.data(), d, y, /*accumulate=*/true);
  agg_stats_.halo_agg_time_s += now_s() - t1;
}

void DistGraph::aggregate_features(float* y) {
  if (!opt_.cache_features) {
    aggregate(part_.features.data(), part_.feat_dim, y, 0);
    return;
  }
  const double t0 = now_s();
  kernels::spmm_cpu(a_local_, part_.features.data(), part_.feat_dim, y, /*accumulate=*/false);
  agg_stats_.local_done_s = now_s();
  agg_stats_.local_agg_time_s += agg_stats_.local_done_s - t0;
  kernels::spmm_cpu(a_halo_, halo_features_.data(), part_.feat_dim, y, /*accumulate=*/true);
  agg_stats_.halo_agg_time_s += now_s() - agg_stats_.local_done_s;
}

void DistGraph::aggregate_backward(const float* g, int64_t d, float* dh, int layer) {
  halo_buf_.resize(static_cast<size_t>(part_.num_halo() * d));
  const double t0 = now_s();
  kernels::spmm_cpu(a_halo_t_.view(), g, d, halo_buf_.data(), /*accumulate=*/false);
  agg_stats_.halo_agg_time_s += now_s() - t0;
  exchanger_.start_backward(halo_buf_.data(), d, ExchangeId{layer, Direction::kBackward},
                            precision(layer, Direction::kBackward, d));
  const double t1 = now_s();
  kernels::spmm_cpu(a_local_t_.view(), g, d, dh, /*accumulate=*/false);
  agg_stats_.local_done_s = now_s();
  agg_stats_.local_agg_time_s += agg_stats_.local_done_s - t1;
  exchanger_.finish_backward();
  const double t2 = now_s();
  exchanger_.add_received_gradients(dh);
  agg_stats_.halo_agg_time_s += now_s() - t2;
}

}  // namespace adaqp
