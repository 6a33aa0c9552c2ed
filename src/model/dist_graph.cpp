#include "adaqp/model/dist_graph.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/model/torch_device.h"

namespace adaqp {

namespace {

// Values of one block (local or halo) of the normalised adjacency. A column of out-degree -1 is a
// partial sum (cover layout): coefficient 1.
std::vector<float> block_values(const EdgeNorm& norm, const std::vector<int64_t>& indptr,
                                const std::vector<int32_t>& indices,
                                const std::vector<int64_t>& in_deg,
                                const std::vector<int64_t>& col_out_deg) {
  std::vector<float> values(indices.size());
  const int64_t rows = static_cast<int64_t>(indptr.size()) - 1;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = indptr[i]; k < indptr[i + 1]; ++k) {
      const int64_t out_deg = col_out_deg[indices[k]];
      values[k] = out_deg < 0 ? 1.0F : norm.weight(in_deg[i], out_deg);
    }
  }
  return values;
}

// Values of the cover layout's S: a source row's one entry is 1, a partial row's the edges'.
std::vector<float> send_values(const EdgeNorm& norm, const CoverLayout& cover,
                               const std::vector<int64_t>& owned_out_deg) {
  std::vector<float> values(cover.send_indices.size());
  for (size_t k = 0; k + 1 < cover.send_indptr.size(); ++k) {
    const int64_t dst_in_deg = cover.send_dst_in_degree[k];
    for (int64_t e = cover.send_indptr[k]; e < cover.send_indptr[k + 1]; ++e) {
      values[e] =
          dst_in_deg < 0 ? 1.0F : norm.weight(dst_in_deg, owned_out_deg[cover.send_indices[e]]);
    }
  }
  return values;
}

std::unique_ptr<CoverLayout> make_cover(const Part& part, Communicator& comm,
                                        ExchangeLayout layout) {
  if (layout != ExchangeLayout::kCover) return nullptr;
  return std::make_unique<CoverLayout>(cover_layout(part, comm));
}

// Frees a vector's memory (clear() keeps its capacity).
template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

}  // namespace

// One block of the normalised adjacency where the worker computes: its host CSR (a view of arrays
// that outlive it, or owned for a transpose with a pattern of its own), its arrays where the
// device computes (the host arrays themselves on the CPU, copies on a GPU; a block on the pattern
// of another shares that block's) and its product plan (kernels/spmm.h).
class DistGraph::Block {
 public:
  Block(const kernels::CsrView& view, kernels::CsrMatrix owned, const Device& device,
        const Block* same_pattern = nullptr)
      : owned_(std::move(owned)), view_(view) {
    if (!owned_.indptr.empty()) view_ = owned_.view();
    const int64_t nnz = view_.indptr[view_.rows];
    indptr_ = same_pattern != nullptr ? same_pattern->indptr_
                                      : where_computed(view_.indptr, view_.rows + 1, device);
    indices_ = same_pattern != nullptr ? same_pattern->indices_
                                       : where_computed(view_.indices, nnz, device);
    values_ = where_computed(view_.values, nnz, device);
    plan_ = kernels::make_spmm_plan(
        device, kernels::CsrView{view_.rows, view_.cols, indptr_.data_ptr<int64_t>(),
                                 indices_.data_ptr<int32_t>(), values_.data_ptr<float>()});
  }

  const kernels::CsrView& view() const { return view_; }

  // y = A x (y += A x when accumulate), on the compute stream on CUDA.
  void multiply(const float* x, int64_t d, float* y, bool accumulate) {
    plan_->multiply(x, d, y, accumulate);
  }

 private:
  kernels::CsrMatrix owned_;
  kernels::CsrView view_;
  at::Tensor indptr_, indices_, values_;
  std::unique_ptr<kernels::SpmmPlan> plan_;
};

DistGraph::DistGraph(Part part, Communicator& comm, const DistGraphOptions& opt)
    : part_(std::move(part)),
      comm_(comm),
      opt_(opt),
      cover_(make_cover(part_, comm, opt.exchange)),
      // The cover's boundary moves here: the layout keeps only its matrices.
      boundary_(cover_ != nullptr ? std::move(cover_->boundary) : row_boundary(part_)),
      local_timer_(opt.device),
      halo_timer_(opt.device),
      // The rows layout gathers the part's send list; the cover layout forms its rows (S h).
      exchanger_(boundary_, cover_ != nullptr ? nullptr : &part_.send_idx, comm,
                 HaloExchangerOptions{opt.overlap, opt.device}) {
  const int64_t owned = part_.num_owned();
  ADAQP_CHECK(opt_.norm != nullptr, "DistGraphOptions::norm: the layers' edge normalisation");
  ADAQP_CHECK(opt_.products || (!opt_.cache_features && cover_ == nullptr),
              "a graph without products neither caches A X nor uses the cover layout");
  // Without products A is read on the host only (its pattern, the solver's weights).
  const Device block_device = opt_.products ? opt_.device : Device::cpu();
  local_values_ = block_values(*opt_.norm, part_.local_indptr, part_.local_indices,
                               part_.owned_in_degree, part_.owned_out_degree);
  const kernels::CsrView local{owned, owned, part_.local_indptr.data(), part_.local_indices.data(),
                               local_values_.data()};
  a_local_ = std::make_unique<Block>(local, kernels::CsrMatrix{}, block_device);
  kernels::CsrView halo;
  if (cover_ == nullptr) {
    halo_values_ = block_values(*opt_.norm, part_.halo_indptr, part_.halo_indices,
                                part_.owned_in_degree, part_.halo_out_degree);
    halo = kernels::CsrView{owned, part_.num_halo(), part_.halo_indptr.data(),
                            part_.halo_indices.data(), halo_values_.data()};
  } else {
    halo_values_ = block_values(*opt_.norm, cover_->halo_indptr, cover_->halo_indices,
                                part_.owned_in_degree, cover_->recv_out_degree);
    halo = kernels::CsrView{owned, boundary_.recvs(), cover_->halo_indptr.data(),
                            cover_->halo_indices.data(), halo_values_.data()};
    send_values_ = send_values(*opt_.norm, *cover_, part_.owned_out_degree);
    const kernels::CsrView send{boundary_.sends(), owned, cover_->send_indptr.data(),
                                cover_->send_indices.data(), send_values_.data()};
    send_ = std::make_unique<Block>(send, kernels::CsrMatrix{}, opt_.device);
    send_t_ =
        std::make_unique<Block>(kernels::CsrView{}, kernels::transpose_csr(send), opt_.device);
  }
  a_halo_ = std::make_unique<Block>(halo, kernels::CsrMatrix{}, block_device);
  if (opt_.products) build_transposes();
  const at::Tensor host_features =
      at::from_blob(part_.features.data(), {owned, part_.feat_dim}, at::kFloat);
  features_ = where_computed(host_features, opt_.device);
  owned_gids_ = to_device(part_.owned_gid, opt_.device);
  if (opt_.cache_features) {
    halo_features_ =
        at::empty({boundary_.recvs(), part_.feat_dim}, torch_options(opt_.device, at::kFloat));
    start_forward(features_.data_ptr<float>(), part_.feat_dim, halo_features_.data_ptr<float>(), 0,
                  Precision{});
    exchanger_.finish_forward();
    sent_rows_ = at::Tensor();
    features_product_ = at::empty_like(features_);
    a_local_->multiply(features_.data_ptr<float>(), part_.feat_dim,
                       features_product_.data_ptr<float>(), /*accumulate=*/false);
    a_halo_->multiply(halo_features_.data_ptr<float>(), part_.feat_dim,
                      features_product_.data_ptr<float>(), /*accumulate=*/true);
    exchanger_.reset_stats();  // settles: the halo rows are no longer in use
    halo_features_ = at::Tensor();
    if (!opt_.keep_features) features_ = at::Tensor();
  }
  // The host copy of the features, unless it is features_ itself (on the CPU).
  if (!features_.defined() || features_.data_ptr<float>() != part_.features.data()) {
    release(part_.features);
  }
  if (opt_.sparse_features) make_sparse_inputs();
}

void DistGraph::make_sparse_inputs() {
  if (opt_.products && !opt_.cache_features) return;  // X travels every epoch
  std::optional<SparseFeatures> ax, x;
  if (features_product_.defined()) {
    ax = sparsify(features_product_, kMaxSparseFeatureDensity);
    if (!ax) return;
  }
  if (features_.defined()) {
    x = sparsify(features_, kMaxSparseFeatureDensity);
    if (!x) return;
  }
  if (ax) {
    sparse_aggregated_features_ = std::make_unique<SparseFeatures>(std::move(*ax));
    features_product_ = at::Tensor();
  }
  if (x) {
    sparse_features_ = std::make_unique<SparseFeatures>(std::move(*x));
    features_ = at::Tensor();
    release(part_.features);  // X's host copy (features_ itself on the CPU)
  }
}

void DistGraph::build_transposes() {
  const kernels::CsrView& local = a_local_->view();
  // A symmetric graph's local block has a symmetric pattern: its transpose needs at most other
  // values (none for GCN, whose normalised matrix is then symmetric).
  std::vector<float> values_t;
  if (!kernels::transpose_values_on_pattern(local, &values_t)) {
    a_local_t_ =
        std::make_unique<Block>(kernels::CsrView{}, kernels::transpose_csr(local), opt_.device);
  } else if (values_t.size() != local_values_.size() ||
             std::memcmp(values_t.data(), local_values_.data(), values_t.size() * sizeof(float)) !=
                 0) {
    local_t_values_ = std::move(values_t);
    a_local_t_ = std::make_unique<Block>(kernels::CsrView{local.rows, local.cols, local.indptr,
                                                          local.indices, local_t_values_.data()},
                                         kernels::CsrMatrix{}, opt_.device, a_local_.get());
  }
  a_halo_t_ = std::make_unique<Block>(kernels::CsrView{}, kernels::transpose_csr(a_halo_->view()),
                                      opt_.device);
}

void DistGraph::require_products(const char* what) const {
  ADAQP_CHECK(opt_.products, std::string(what) + " on a graph built without products");
}

DistGraph::~DistGraph() = default;

void DistGraph::set_quant_plan(const QuantPlan* plan) {
  plan_ = plan;
  exchanger_.set_overlap(plan_ == nullptr || plan_->overlap);
  if (plan_ != nullptr) exchanger_.prepare(*plan_);
}

const kernels::CsrView& DistGraph::a_halo() const {
  return a_halo_->view();
}

const kernels::CsrView* DistGraph::send_matrix() const {
  return send_ != nullptr ? &send_->view() : nullptr;
}

void DistGraph::settle() {
  exchanger_.settle();
}

const CommStats& DistGraph::comm_stats() {
  return exchanger_.stats();
}

const AggregationStats& DistGraph::aggregation_stats() {
  agg_stats_.local_agg_time_s = local_timer_.seconds();
  agg_stats_.halo_agg_time_s = halo_timer_.seconds();
  return agg_stats_;
}

void DistGraph::reset_comm_stats() {
  exchanger_.reset_stats();
  local_timer_.reset();
  halo_timer_.reset();
  agg_stats_ = AggregationStats{};
}

Precision DistGraph::precision(int layer, Direction dir, int64_t d) {
  Precision p;
  if (plan_ == nullptr) return p;
  const std::vector<MessageBits>& bits =
      dir == Direction::kForward ? plan_->forward : plan_->backward;
  if (static_cast<size_t>(layer) >= bits.size() || bits[layer].full_precision) return p;
  p.bits = &bits[layer];
  p.key.seed = plan_->seed;
  p.key.epoch = plan_->epoch;
  if (plan_->trace_ranges) {
    std::vector<MessageTrace>& traces = traces_.by_dir[static_cast<int>(dir)];
    if (traces.size() <= static_cast<size_t>(layer)) traces.resize(layer + 1);
    traces[layer].width = d;
    traces[layer].ranges.resize(bits[layer].send.size());
    p.ranges = traces[layer].ranges.data();
  }
  return p;
}

float* DistGraph::halo_buffer(int64_t d) {
  if (halo_buf_.defined()) exchanger_.quiesce();  // an exchange that failed midway may use it
  halo_buf_ = at::empty({std::max<int64_t>(boundary_.recvs() * d, 1)},
                        torch_options(opt_.device, at::kFloat));
  return halo_buf_.data_ptr<float>();
}

void DistGraph::aggregate(const float* h, int64_t d, float* y, int layer) {
  begin_aggregate(h, d, layer);
  aggregate_local(h, d, y);
  end_aggregate(d, y);
}

void DistGraph::start_forward(const float* h, int64_t d, float* halo, int layer,
                              const Precision& p) {
  if (send_ != nullptr) {
    if (sent_rows_.defined()) exchanger_.quiesce();  // an exchange that failed midway may use them
    sent_rows_ = at::empty({std::max<int64_t>(boundary_.sends() * d, 1)},
                           torch_options(opt_.device, at::kFloat));
    halo_timer_.start(nullptr);
    send_->multiply(h, d, sent_rows_.data_ptr<float>(), /*accumulate=*/false);
    halo_timer_.stop(nullptr);
    h = sent_rows_.data_ptr<float>();
  }
  exchanger_.start_forward(h, d, halo, ExchangeId{layer, Direction::kForward}, p);
}

void DistGraph::begin_aggregate(const float* h, int64_t d, int layer) {
  require_products("begin_aggregate");  // before the exchange starts
  float* halo = halo_buffer(d);
  start_forward(h, d, halo, layer, precision(layer, Direction::kForward, d));
}

void DistGraph::aggregate_local(const float* h, int64_t d, float* y) {
  require_products("aggregate_local");
  local_timer_.start(nullptr);
  a_local_->multiply(h, d, y, /*accumulate=*/false);
  local_timer_.stop(nullptr);
  agg_stats_.local_done_s = steady_now_s();
}

void DistGraph::end_aggregate(int64_t d, float* y, at::Tensor* halo_rows) {
  require_products("end_aggregate");
  exchanger_.finish_forward();
  sent_rows_ = at::Tensor();  // sent (CUDA: the exchange is ordered before any reuse)
  halo_timer_.start(nullptr);
  a_halo_->multiply(halo_buf_.data_ptr<float>(), d, y, /*accumulate=*/true);
  halo_timer_.stop(nullptr);
  if (halo_rows != nullptr) *halo_rows = halo_buf_;
  halo_buf_ = at::Tensor();  // CUDA: the product is enqueued before any reuse
}

void DistGraph::aggregate_again(const float* h, const at::Tensor& halo_rows, int64_t d, float* y) {
  ADAQP_CHECK(halo_rows.numel() >= boundary_.recvs() * d,
              "halo rows of " + std::to_string(halo_rows.numel()) + " floats for " +
                  std::to_string(boundary_.recvs()) + " rows of width " + std::to_string(d));
  aggregate_local(h, d, y);
  halo_timer_.start(nullptr);
  a_halo_->multiply(halo_rows.data_ptr<float>(), d, y, /*accumulate=*/true);
  halo_timer_.stop(nullptr);
}

const at::Tensor& DistGraph::aggregate_features() {
  ADAQP_CHECK(sparse_aggregated_features_ == nullptr,
              "A X is kept sparse: read sparse_aggregated_features()");
  if (!opt_.cache_features) {
    if (!features_product_.defined()) features_product_ = at::empty_like(features_);
    aggregate(features_.data_ptr<float>(), part_.feat_dim, features_product_.data_ptr<float>(), 0);
  }
  return features_product_;
}

void DistGraph::begin_halo_rows(const at::Tensor& h, int layer) {
  ADAQP_CHECK(send_ == nullptr, "halo rows need the rows layout");
  ADAQP_CHECK(h.dim() == 2 && h.size(0) == part_.num_owned() && h.is_contiguous(),
              "halo rows of a " + h.toString() + " that is not num_owned x d and contiguous");
  const int64_t d = h.size(1);
  float* halo = halo_buffer(d);  // quiesces an exchange that failed midway
  start_forward(h.data_ptr<float>(), d, halo, layer, precision(layer, Direction::kForward, d));
  halo_source_ = h;
}

at::Tensor DistGraph::end_halo_rows(const at::Tensor& h) {
  ADAQP_CHECK(halo_source_.defined() && h.is_alias_of(halo_source_),
              "end_halo_rows over another tensor than begin_halo_rows sent, or without it");
  const int64_t d = halo_source_.size(1);
  exchanger_.finish_forward();
  halo_source_ = at::Tensor();  // sent (CUDA: the exchange is ordered before any reuse)
  at::Tensor rows = halo_buf_.narrow(0, 0, boundary_.recvs() * d).view({boundary_.recvs(), d});
  halo_buf_ = at::Tensor();
  return rows;
}

void DistGraph::begin_halo_gradients(const at::Tensor& halo_grad, int layer) {
  ADAQP_CHECK(send_ == nullptr, "halo gradients need the rows layout");
  ADAQP_CHECK(
      halo_grad.dim() == 2 && halo_grad.size(0) == boundary_.recvs() && halo_grad.is_contiguous(),
      "halo gradients " + halo_grad.toString() + " for " + std::to_string(boundary_.recvs()) +
          " received rows, contiguous");
  if (halo_buf_.defined()) exchanger_.quiesce();  // an exchange that failed midway may use it
  halo_buf_ = halo_grad;                          // held until the exchange has sent it
  exchanger_.start_backward(halo_grad.data_ptr<float>(), halo_grad.size(1),
                            ExchangeId{layer, Direction::kBackward},
                            precision(layer, Direction::kBackward, halo_grad.size(1)));
  if (!overlaps()) halo_buf_ = at::Tensor();  // sent
  halo_gradients_width_ = halo_grad.size(1);
}

void DistGraph::end_halo_gradients(const at::Tensor& dh) {
  ADAQP_CHECK(halo_gradients_width_ >= 0, "end_halo_gradients without begin_halo_gradients");
  ADAQP_CHECK(dh.dim() == 2 && dh.size(0) == part_.num_owned() &&
                  dh.size(1) == halo_gradients_width_ && dh.is_contiguous(),
              "halo gradients of width " + std::to_string(halo_gradients_width_) + " into " +
                  dh.toString() + " that is not num_owned x that width, contiguous");
  halo_gradients_width_ = -1;
  exchanger_.finish_backward();
  halo_buf_ = at::Tensor();
  exchanger_.add_received_gradients(dh.data_ptr<float>());
}

const DistGraph::Edges& DistGraph::edges() {
  if (edges_.dst.defined()) return edges_;
  const kernels::CsrView& local = a_local_->view();
  const kernels::CsrView& halo = a_halo_->view();
  const int64_t owned = part_.num_owned(), central = part_.num_central;
  std::vector<int64_t> dst, src;
  dst.reserve(static_cast<size_t>(local.indptr[local.rows] + halo.indptr[halo.rows]));
  src.reserve(dst.capacity());
  // A central row has no halo in-edges: its edges are A_local's first ones.
  ADAQP_CHECK(halo.indptr[central] == 0, "central rows with halo in-edges");
  const auto add = [&](const kernels::CsrView& block, int64_t first_row, int64_t src_offset) {
    for (int64_t i = first_row; i < block.rows; ++i) {
      for (int64_t k = block.indptr[i]; k < block.indptr[i + 1]; ++k) {
        dst.push_back(i < central ? i : i - central);
        src.push_back(src_offset + block.indices[k]);
      }
    }
  };
  add(local, 0, 0);
  add(halo, central, owned);
  std::vector<int64_t> gids = part_.owned_gid;
  gids.insert(gids.end(), part_.halo_gid.begin(), part_.halo_gid.end());
  edges_ = Edges{to_device(dst, opt_.device), to_device(src, opt_.device),
                 to_device(gids, opt_.device), local.indptr[central], local.indptr[owned]};
  return edges_;
}

void DistGraph::aggregate_backward(const float* g, int64_t d, float* dh, int layer) {
  begin_aggregate_backward(g, d, layer);
  end_aggregate_backward(g, d, dh);
}

void DistGraph::begin_aggregate_backward(const float* g, int64_t d, int layer) {
  require_products("begin_aggregate_backward");
  float* halo = halo_buffer(d);
  halo_timer_.start(nullptr);
  a_halo_t_->multiply(g, d, halo, /*accumulate=*/false);
  halo_timer_.stop(nullptr);
  exchanger_.start_backward(halo, d, ExchangeId{layer, Direction::kBackward},
                            precision(layer, Direction::kBackward, d));
  if (!overlaps()) halo_buf_ = at::Tensor();  // sent
}

void DistGraph::end_aggregate_backward(const float* g, int64_t d, float* dh) {
  require_products("end_aggregate_backward");
  local_timer_.start(nullptr);
  (a_local_t_ != nullptr ? *a_local_t_ : *a_local_).multiply(g, d, dh, /*accumulate=*/false);
  local_timer_.stop(nullptr);
  agg_stats_.local_done_s = steady_now_s();
  exchanger_.finish_backward();
  halo_buf_ = at::Tensor();  // sent
  halo_timer_.start(nullptr);
  if (send_t_ == nullptr) {
    exchanger_.add_received_gradients(dh);
  } else {
    const at::Tensor received = exchanger_.received_gradients();
    send_t_->multiply(received.data_ptr<float>(), d, dh, /*accumulate=*/true);
  }
  halo_timer_.stop(nullptr);
}

}  // namespace adaqp
