#include "adaqp/model/dist_graph.h"

#include <cmath>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

// Tags of the exchanges of layer l: forward and backward never share one.
int forward_tag(int layer) {
  return 2 * layer;
}
int backward_tag(int layer) {
  return 2 * layer + 1;
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
    : part_(std::move(part)), comm_(comm), opt_(opt), exchanger_(part_, comm) {
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
                             forward_tag(0));
    exchanger_.finish_forward();
    exchanger_.reset_stats();
  }
}

void DistGraph::aggregate(const float* h, int64_t d, float* y, int layer) {
  halo_buf_.resize(static_cast<size_t>(part_.num_halo() * d));
  exchanger_.start_forward(h, d, halo_buf_.data(), forward_tag(layer));
  kernels::spmm_cpu(a_local_, h, d, y, /*accumulate=*/false);
  exchanger_.finish_forward();
  kernels::spmm_cpu(a_halo_, halo_buf_.data(), d, y, /*accumulate=*/true);
}

void DistGraph::aggregate_features(float* y) {
  if (!opt_.cache_features) {
    aggregate(part_.features.data(), part_.feat_dim, y, 0);
    return;
  }
  kernels::spmm_cpu(a_local_, part_.features.data(), part_.feat_dim, y, /*accumulate=*/false);
  kernels::spmm_cpu(a_halo_, halo_features_.data(), part_.feat_dim, y, /*accumulate=*/true);
}

void DistGraph::aggregate_backward(const float* g, int64_t d, float* dh, int layer) {
  halo_buf_.resize(static_cast<size_t>(part_.num_halo() * d));
  kernels::spmm_cpu(a_halo_t_.view(), g, d, halo_buf_.data(), /*accumulate=*/false);
  exchanger_.start_backward(halo_buf_.data(), d, backward_tag(layer));
  kernels::spmm_cpu(a_local_t_.view(), g, d, dh, /*accumulate=*/false);
  exchanger_.finish_backward(dh);
}

}  // namespace adaqp
