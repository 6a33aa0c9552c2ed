#include "adaqp/model/dist_graph.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

namespace {

// Frees a vector's memory (clear() keeps its capacity).
template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

const EdgeNorm& required(const EdgeNorm* norm) {
  ADAQP_CHECK(norm != nullptr, "DistGraphOptions::norm: the layers' edge normalisation");
  return *norm;
}

}  // namespace

DistGraph::DistGraph(Part part, Communicator& comm, const DistGraphOptions& opt)
    : part_(std::move(part)),
      comm_(comm),
      opt_(opt),
      layout_(make_halo_layout(opt.exchange, part_, comm, required(opt.norm), opt.device)),
      local_timer_(opt.device),
      halo_timer_(opt.device),
      exchanger_(layout_->boundary(), layout_->send_list(), comm,
                 HaloExchangerOptions{opt.overlap, opt.device}) {
  const int64_t owned = part_.num_owned();
  // Relational layers cache their own aggregation of X (relation_features), not A X.
  const bool caches_product = opt_.cache_features && !opt_.relational;
  ADAQP_CHECK(opt_.products || (!caches_product &&
                                (layout_->receives_node_rows() || layout_->layer_forms_rows())),
              "a graph without products neither caches A X nor forms the rows it sends");
  ADAQP_CHECK(!layout_->layer_forms_rows() || opt_.relational,
              "the relation_first layout serves layers that aggregate each relation on their own");
  // Without products A is read on the host only (its pattern, the solver's weights).
  const Device block_device = opt_.products ? opt_.device : Device::cpu();
  local_values_ = block_values(*opt_.norm, part_.local_indptr, part_.local_indices,
                               part_.owned_in_degree, part_.owned_out_degree);
  const kernels::CsrView local{owned, owned, part_.local_indptr.data(), part_.local_indices.data(),
                               local_values_.data()};
  a_local_ = std::make_unique<AdjacencyBlock>(local, kernels::CsrMatrix{}, block_device);
  a_halo_ =
      std::make_unique<AdjacencyBlock>(layout_->halo_block(), kernels::CsrMatrix{}, block_device);
  if (opt_.products) build_transposes();
  // X as CSR where A X was made from it, or where layer 0 reads it sparse straight from a sparse
  // part: on the host, X is then made dense only if A X turns out too dense to keep sparse.
  std::optional<SparseFeatures> sparse_x;
  if (part_.feature_csr && opt_.sparse_features && !opt_.device.is_cuda() && !opt_.relational &&
      (caches_product || !opt_.products)) {
    sparse_x = sparse_from_csr(*part_.feature_csr, owned, part_.feat_dim, kMaxSparseFeatureDensity);
  }
  if (!sparse_x) use_dense_features();
  owned_gids_ = to_device(part_.owned_gid, opt_.device);
  if (caches_product) {
    halo_features_ =
        at::empty({boundary().recvs(), part_.feat_dim}, torch_options(opt_.device, at::kFloat));
    if (features_.defined()) {
      start_forward(features_.data_ptr<float>(), part_.feat_dim, halo_features_.data_ptr<float>(),
                    0, Precision{});
      exchanger_.finish_forward();
      layout_->release_sent_rows();
    } else {
      exchange_sparse_rows(*sparse_x);
    }
    // On the CPU, sparse inputs make A X from X's non-zeros (bag-of-words: under 1% of a dense
    // product's work and never its dense matrix), the same values bit for bit.
    std::optional<SparseFeatures> ax;
    if (opt_.sparse_features && !opt_.device.is_cuda()) {
      if (!sparse_x) sparse_x = sparsify(features_, kMaxSparseFeatureDensity);
      if (sparse_x) {
        ax = sparse_product(a_local_->view(), *sparse_x, a_halo_->view(),
                            halo_features_.data_ptr<float>(), kMaxSparseFeatureDensity);
      }
    }
    if (ax) {
      sparse_aggregated_features_ = std::make_unique<SparseFeatures>(std::move(*ax));
    } else {
      if (!features_.defined()) use_dense_features();
      features_product_ = at::empty_like(features_);
      a_local_->multiply(features_.data_ptr<float>(), part_.feat_dim,
                         features_product_.data_ptr<float>(), /*accumulate=*/false);
      a_halo_->multiply(halo_features_.data_ptr<float>(), part_.feat_dim,
                        features_product_.data_ptr<float>(), /*accumulate=*/true);
    }
    exchanger_.reset_stats();  // settles: the halo rows are no longer in use
    halo_features_ = at::Tensor();
    if (!opt_.keep_features) {
      features_ = at::Tensor();
      sparse_x.reset();
    }
  }
  // The host copy of the features, unless it is features_ itself (on the CPU).
  if (!features_.defined() || features_.data_ptr<float>() != part_.features.data()) {
    release(part_.features);
  }
  part_.feature_csr.reset();
  if (opt_.sparse_features) make_sparse_inputs(std::move(sparse_x));
}

void DistGraph::use_dense_features() {
  densify_features(part_);
  made_features_dense_ = true;
  const at::Tensor host =
      at::from_blob(part_.features.data(), {part_.num_owned(), part_.feat_dim}, at::kFloat);
  features_ = where_computed(host, opt_.device);
}

void DistGraph::exchange_sparse_rows(const SparseFeatures& x) {
  // The sent rows made dense from X's non-zeros: the rows the send list names (S selects them) or
  // the layout's S X. They go in send order, so through an exchanger without a send list.
  std::vector<int32_t> selected;
  std::vector<int64_t> offsets;
  std::vector<float> ones;
  const kernels::CsrView* s = layout_->send_matrix();
  kernels::CsrView select;
  if (const std::vector<int64_t>* list = layout_->send_list()) {
    selected.assign(list->begin(), list->end());
    offsets.resize(list->size() + 1);
    std::iota(offsets.begin(), offsets.end(), int64_t{0});
    ones.assign(list->size(), 1.0f);
    select = kernels::CsrView{static_cast<int64_t>(list->size()), x.rows, offsets.data(),
                              selected.data(), ones.data()};
    s = &select;
  }
  ADAQP_CHECK(s != nullptr, "a layout that neither lists nor forms the rows it sends");
  const at::Tensor sent = dense_product(*s, x);
  HaloExchanger once(boundary(), nullptr, comm_, HaloExchangerOptions{false, opt_.device});
  once.start_forward(sent.data_ptr<float>(), x.cols, halo_features_.data_ptr<float>(),
                     ExchangeId{0, Direction::kForward}, Precision{});
  once.finish_forward();
  once.settle();
}

void DistGraph::make_sparse_inputs(std::optional<SparseFeatures> x) {
  if (opt_.products && !opt_.cache_features) return;  // X travels every epoch
  std::optional<SparseFeatures> ax;
  if (features_product_.defined()) {
    ax = sparsify(features_product_, kMaxSparseFeatureDensity);
    if (!ax) return;
  }
  if (features_.defined()) {
    if (!x) x = sparsify(features_, kMaxSparseFeatureDensity);
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
    a_local_t_ = AdjacencyBlock::transpose(local, opt_.device);
  } else if (values_t.size() != local_values_.size() ||
             std::memcmp(values_t.data(), local_values_.data(), values_t.size() * sizeof(float)) !=
                 0) {
    local_t_values_ = std::move(values_t);
    a_local_t_ =
        std::make_unique<AdjacencyBlock>(kernels::CsrView{local.rows, local.cols, local.indptr,
                                                          local.indices, local_t_values_.data()},
                                         kernels::CsrMatrix{}, opt_.device, a_local_.get());
  }
  a_halo_t_ = AdjacencyBlock::transpose(a_halo_->view(), opt_.device);
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
  return layout_->send_matrix();
}

const Boundary& DistGraph::boundary() const {
  return layout_->boundary();
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
  halo_buf_ = at::empty({std::max<int64_t>(boundary().recvs() * d, 1)},
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
  halo_timer_.start(nullptr);
  const float* rows = layout_->sent_rows(h, d);
  halo_timer_.stop(nullptr);
  exchanger_.start_forward(rows, d, halo, ExchangeId{layer, Direction::kForward}, p);
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
  layout_->release_sent_rows();
  halo_timer_.start(nullptr);
  a_halo_->multiply(halo_buf_.data_ptr<float>(), d, y, /*accumulate=*/true);
  halo_timer_.stop(nullptr);
  if (halo_rows != nullptr) *halo_rows = halo_buf_;
  halo_buf_ = at::Tensor();  // CUDA: the product is enqueued before any reuse
}

void DistGraph::aggregate_again(const float* h, const at::Tensor& halo_rows, int64_t d, float* y) {
  ADAQP_CHECK_GE(halo_rows.numel(), boundary().recvs() * d,
                 "halo floats for the received rows of width " + std::to_string(d));
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
  ADAQP_CHECK(layout_->receives_node_rows(), "halo rows need a layout that sends node rows");
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
  const int64_t recvs = boundary().recvs();
  at::Tensor rows = halo_buf_.narrow(0, 0, recvs * d).view({recvs, d});
  halo_buf_ = at::Tensor();
  return rows;
}

void DistGraph::begin_formed_rows(const at::Tensor& rows, int layer) {
  ADAQP_CHECK(layout_->layer_forms_rows(), "formed rows need a layout whose layers form them");
  ADAQP_CHECK(rows.dim() == 2 && rows.size(0) == boundary().sends() && rows.is_contiguous(),
              "formed rows " + rows.toString() + " for " + std::to_string(boundary().sends()) +
                  " sent rows, contiguous");
  const int64_t d = rows.size(1);
  float* halo = halo_buffer(d);  // quiesces an exchange that failed midway
  exchanger_.start_forward(rows.data_ptr<float>(), d, halo, ExchangeId{layer, Direction::kForward},
                           precision(layer, Direction::kForward, d));
  halo_source_ = rows;
}

void DistGraph::begin_halo_gradients(const at::Tensor& halo_grad, int layer) {
  ADAQP_CHECK(layout_->receives_node_rows() || layout_->layer_forms_rows(),
              "halo gradients need a layout that sends node rows or formed rows");
  ADAQP_CHECK(
      halo_grad.dim() == 2 && halo_grad.size(0) == boundary().recvs() && halo_grad.is_contiguous(),
      "halo gradients " + halo_grad.toString() + " for " + std::to_string(boundary().recvs()) +
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

at::Tensor DistGraph::end_formed_gradients() {
  ADAQP_CHECK(halo_gradients_width_ >= 0 && layout_->layer_forms_rows(),
              "end_formed_gradients without begin_halo_gradients over formed rows");
  halo_gradients_width_ = -1;
  exchanger_.finish_backward();
  halo_buf_ = at::Tensor();
  return exchanger_.received_gradients();
}

const DistGraph::Edges& DistGraph::edges() {
  if (!edges_.dst.defined())
    edges_ = edge_list(part_, a_local_->view(), a_halo_->view(), opt_.device);
  return edges_;
}

RelationAdjacency& DistGraph::relation_adjacency() {
  if (!relations_) relations_ = layout_->relation_adjacency(part_, opt_.device);
  return *relations_;
}

const PairFeatures& DistGraph::relation_features() {
  ADAQP_CHECK(opt_.relational && opt_.cache_features && features_.defined(),
              "relation_features without the feature cache of a relational graph");
  if (relation_features_) return *relation_features_;
  RelationAdjacency& rel = relation_adjacency();
  const int64_t width = features_.size(1);
  const Boundary rows = row_boundary(part_);
  at::Tensor halo = at::empty({std::max<int64_t>(rows.recvs(), 1), width},
                              torch_options(opt_.device, at::kFloat));
  {
    HaloExchanger once(rows, &part_.send_idx, comm_, HaloExchangerOptions{false, opt_.device});
    once.start_forward(features_.data_ptr<float>(), width, halo.data_ptr<float>(),
                       ExchangeId{0, Direction::kForward}, Precision{});
    once.finish_forward();
    once.settle();
  }
  at::Tensor z = at::zeros({rel.num_pairs(), width}, features_.options());
  // An empty block (no such edges on this rank; no halo at W = 1) adds nothing.
  if (rel.local().view().indptr[rel.local().view().rows] > 0)
    rel.local().multiply(features_.data_ptr<float>(), width, z.data_ptr<float>(), true);
  if (rel.halo().view().indptr[rel.halo().view().rows] > 0)
    rel.halo().multiply(halo.data_ptr<float>(), width, z.data_ptr<float>(), true);
  relation_features_ = std::make_unique<PairFeatures>(rel.without_zero_pairs(z, opt_.device));
  return *relation_features_;
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
  layout_->add_returned_gradients(exchanger_, d, dh);
  halo_timer_.stop(nullptr);
}

}  // namespace adaqp
