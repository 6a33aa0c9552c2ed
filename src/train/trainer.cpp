#include "adaqp/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <omp.h>
#include <spdlog/spdlog.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <algorithm>
#include <string>
#include <utility>

#include "adaqp/assign/make_bit_policy.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/exchange/relation_first_layout.h"
#include "adaqp/kernels/synchronize.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/model/gnn.h"
#include "adaqp/partition/boundary_cover.h"
#include "adaqp/quant/quantizer.h"
#include "adaqp/tensor/torch_device.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/roc_auc.h"

namespace adaqp {

namespace {

at::Tensor label_tensor(const Part& part, const Device& device) {
  const int64_t n = part.num_owned();
  if (part.multilabel) {
    return to_device(part.multilabels, device).view({n, part.num_classes}).to(at::kFloat);
  }
  return to_device(part.labels, device);
}

double ratio(int64_t num, int64_t den) {
  return den > 0 ? static_cast<double>(num) / static_cast<double>(den) : 0.0;
}

DistGraphOptions graph_options(const TrainerOptions& o) {
  DistGraphOptions choices;
  choices.cache_features = o.cache_features;
  choices.sparse_features = o.sparse_features;
  choices.overlap = overlaps(o.mode);
  choices.exchange = o.exchange;
  choices.device = o.device;
  return graph_options_for(o.model.type, choices);
}

// Probe sizes from the job's rows: the narrowest exchanged row at the smallest width to the widest
// at full precision (objective seconds weighs it) or at the largest width; at least the hidden
// and output widths, and every row `model` exchanges per epoch.
LinkProbeOptions probe_options(const TrainerOptions& o, const Part& part, const Gnn& model) {
  int64_t narrow = std::min<int64_t>(o.model.hidden, part.num_classes);
  // The features' rows travel in training only where the model's layer 0 does not cache them.
  int64_t wide = graph_options(o).cache_features ? o.model.hidden
                                                 : std::max<int64_t>(o.model.hidden, part.feat_dim);
  for (int l = 0; l < o.model.layers; ++l) {
    const LayerExchange e = model->exchange(l, graph_options(o));
    if (e.cached) continue;
    narrow = std::min(narrow, e.width);
    wide = std::max(wide, e.width);
  }
  const std::vector<int>& bits = o.adaptive.bit_set;
  LinkProbeOptions p;
  p.device = o.device;
  p.min_row_bytes = quant::message_bytes(narrow, *std::min_element(bits.begin(), bits.end()));
  const int64_t widest =
      o.adaptive.objective == assign::Objective::kSeconds
          ? quant::full_precision_bytes(wide)
          : quant::message_bytes(wide, *std::max_element(bits.begin(), bits.end()));
  p.max_row_bytes = std::max(widest, 2 * p.min_row_bytes);
  return p;
}

// InputEmbedding of the owned nodes whose type has no features anywhere (no rank holds a non-zero
// feature of a node of that type): collective. Disabled on every rank when every type with nodes
// has some (a type of no nodes had enabled it with no rows, and layer 0's cache with it).
InputEmbedding input_embedding(const DistGraph& graph, Communicator& comm, uint64_t seed) {
  const Part& part = graph.part();
  const size_t types = static_cast<size_t>(part.num_node_types);
  std::vector<int64_t> counts(2 * types, 0);  // per type: nodes with a non-zero feature, nodes
  const at::Tensor nonzero = graph.features().ne(0).any(1).to(at::kCPU);
  const bool* any = nonzero.data_ptr<bool>();
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    const auto t = static_cast<size_t>(part.owned_type[i]);
    counts[t] += any[i] ? 1 : 0;
    counts[types + t] += 1;
  }
  comm.allreduce_sum(counts.data(), counts.size());
  std::vector<int64_t> featured(types, 0);
  for (size_t t = 0; t < types; ++t) featured[t] = counts[t] > 0 || counts[types + t] == 0;
  InputEmbedding e;
  e.enabled = std::count(featured.begin(), featured.end(), 0) > 0;
  e.seed = seed;
  for (int64_t i = 0; e.enabled && i < part.num_owned(); ++i) {
    if (featured[part.owned_type[i]] == 0) {
      e.rows.push_back(i);
      e.gids.push_back(part.owned_gid[i]);
    }
  }
  return e;
}

GnnOptions gnn_options(GnnOptions o, const Part& part) {
  o.in_dim = part.feat_dim;
  o.out_dim = part.num_classes;
  o.relations = part.num_relations;
  // num_relations, not heterogeneous(): a part may own no node and still be typed.
  ADAQP_CHECK(!model_type_rules(o.type).relational || part.num_relations > 0,
              std::string("model type ") + to_string(o.type) + " on a part without relations");
  return o;
}

// Bytes per epoch at full precision of the exchanges of `model` (`layers` layers) on a graph of
// options `graph` whose exchanges send `sends` rows and receive `recvs`.
int64_t exchange_bytes(const Gnn& model, int layers, const DistGraphOptions& graph, int64_t sends,
                       int64_t recvs) {
  int64_t bytes = 0;
  for (int l = 0; l < layers; ++l) {
    const LayerExchange e = model->exchange(l, graph);
    const int64_t row = e.width * static_cast<int64_t>(sizeof(float));
    if (!e.cached) bytes += sends * row;
    if (e.backward) bytes += recvs * row;
  }
  return bytes;
}

// communication.exchange auto (common/choices.h) made concrete, alike on every rank: rows, but for
// layers that aggregate each relation on their own (R-GCN) on more than one part the layout whose
// exchanges move fewer bytes per epoch at full precision over the whole job (collective then):
// rows (as wide as each layer's input), or relation_first (a minimum cover, as wide as each
// layer's output, both ways) where its message keys fit. A learned featureless input counts as
// asked for (uncached), also where every type turns out to have features.
TrainerOptions with_exchange_chosen(TrainerOptions o, const Part& part, Communicator& comm) {
  if (o.exchange != ExchangeLayout::kAuto) return o;
  o.exchange = ExchangeLayout::kRows;
  if (!model_type_rules(o.model.type).relational || part.num_parts == 1 ||
      !relation_first_keys_fit(part))
    return o;
  int64_t rows[2] = {static_cast<int64_t>(part.send_idx.size()), relation_first_rows(part)};
  comm.allreduce_sum(rows, 2);
  const Gnn shapes(gnn_options(o.model, part));
  TrainerOptions first = o;
  first.exchange = ExchangeLayout::kRelationFirst;
  const int64_t by_rows =
      exchange_bytes(shapes, o.model.layers, graph_options(o), rows[0], rows[0]);
  const int64_t by_first =
      exchange_bytes(shapes, o.model.layers, graph_options(first), rows[1], rows[1]);
  if (by_first < by_rows) o.exchange = ExchangeLayout::kRelationFirst;
  if (part.rank == 0) {
    spdlog::info(
        "communication.exchange auto: {} (per epoch at full precision, all ranks: rows {:.2f} MB, "
        "relation_first {:.2f} MB)",
        to_string(o.exchange), static_cast<double>(by_rows) / 1e6,
        static_cast<double>(by_first) / 1e6);
  }
  return o;
}

}  // namespace

void set_compute_threads(int threads) {
  ADAQP_CHECK_GE(threads, 1, "thread count");
  at::set_num_threads(threads);
  omp_set_num_threads(threads);
}

struct Trainer::Impl {
  Impl(Part part, Communicator& communicator, const TrainerOptions& options)
      : comm(communicator),
        opt(options),
        graph(std::move(part), communicator, graph_options(options)) {
    const Part& p = graph.part();
    ADAQP_CHECK_EQ(p.global_split_counts.size(), size_t{3}, "split counts of the part");
    if (p.global_split_counts[0] <= 0) {
      throw ConfigError("the dataset has no training nodes: the loss would be undefined");
    }
    metric = resolve_score_metric(opt.metric, p.multilabel);
    // TF32 tensor cores for libtorch's dense products on the GPU (a process-wide switch): only when
    // asked for, so that fp32 runs match the CPU's arithmetic.
    at::globalContext().setAllowTF32CuBLAS(opt.precision == ComputePrecision::kTf32);
    // Initialised on the CPU from the seed, then moved: every device starts from the same values.
    torch::manual_seed(opt.seed);
    GnnOptions model_options = gnn_options(opt.model, p);
    if (model_options.embedding.enabled) {
      model_options.embedding = input_embedding(graph, comm, opt.seed);
    }
    model = Gnn(model_options);
    // Built here, at start-up, so that a failure ends the job before any exchange, and layer 0's
    // cached aggregation outside the first epoch's time.
    if (graph.options().relational) {
      graph.relation_adjacency();
      if (graph.options().cache_features && !model->local_embedding().defined())
        graph.relation_features();
    }
    model->to(torch_device(opt.device));
    attach_flat_gradients();
    std::vector<at::Tensor> trained = model->parameters();
    if (const at::Tensor& e = model->local_embedding(); e.defined()) {
      e.mutable_grad() = at::zeros_like(e);
      trained.push_back(e);
    }
    optimizer = std::make_unique<torch::optim::Adam>(
        trained, torch::optim::AdamOptions(opt.lr).weight_decay(opt.weight_decay));
    labels = label_tensor(p, opt.device);
    split_idx = {to_device(p.train_idx, opt.device), to_device(p.valid_idx, opt.device),
                 to_device(p.test_idx, opt.device)};
    if (quantizes(opt.mode)) {
      SchemeOptions scheme;
      scheme.scheme = opt.scheme;
      scheme.bits = opt.bits;
      scheme.seed = opt.seed;
      AdaptiveInputs inputs;
      if (opt.scheme == BitScheme::kAdaptive) {
        link = std::make_unique<LinkModel>(
            opt.link_costs.empty()
                ? probe_link_model(comm, graph.boundary(), probe_options(opt, p, model))
                : fixed_link_model(opt.link_costs));
        inputs = AdaptiveInputs{&graph.a_halo(), &comm, link->time, opt.link_costs.empty(),
                                graph.send_matrix()};
      }
      policy = make_bit_policy(graph.boundary(), opt.model.layers, scheme, opt.adaptive, &inputs);
    }
  }

  // This rank's share of the global loss over split k (0 train, 1 valid, 2 test): the sum over
  // its nodes of the split / the global normaliser (the split's nodes of all ranks, times the
  // classes for multi-label data).
  at::Tensor local_loss(const at::Tensor& logits, int k = 0) const {
    const Part& p = graph.part();
    const at::Tensor out = logits.index_select(0, split_idx[k]);
    const at::Tensor target = labels.index_select(0, split_idx[k]);
    const auto nodes = static_cast<double>(std::max<int64_t>(p.global_split_counts[k], 1));
    if (p.multilabel) {
      return at::binary_cross_entropy_with_logits(out, target, {}, {}, at::Reduction::Sum) /
             (nodes * static_cast<double>(p.num_classes));
    }
    return at::nll_loss(at::log_softmax(out, 1), target, {}, at::Reduction::Sum) / nodes;
  }

  // Makes every parameter's gradient a view of one flat buffer, so that the all-reduce moves
  // one contiguous block in place. Backward accumulates into defined gradients in place
  // (AccumulateGrad), so the views stay.
  void attach_flat_gradients() {
    int64_t total = 0;
    for (const at::Tensor& p : model->parameters()) total += p.numel();
    flat_grad = at::zeros({total}, torch_options(opt.device, at::kFloat));
    int64_t offset = 0;
    for (at::Tensor& p : model->parameters()) {
      p.mutable_grad() = flat_grad.narrow(0, offset, p.numel()).view_as(p);
      offset += p.numel();
    }
  }

  void allreduce_gradients() {
    comm.allreduce_sum(flat_grad.data_ptr<float>(), static_cast<size_t>(flat_grad.numel()));
  }

  // The full-precision forward without dropout: the owned nodes' logits. Collective.
  at::Tensor eval_logits() {
    at::NoGradGuard no_grad;
    const at::Tensor logits = model->forward(graph, ForwardMode{});
    graph.settle();
    return logits;
  }

  Communicator& comm;
  TrainerOptions opt;
  ScoreMetric metric = ScoreMetric::kAccuracy;  // opt.metric, auto resolved
  DistGraph graph;
  Gnn model{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer;
  at::Tensor flat_grad;               // every parameter's gradient is a view of it
  at::Tensor labels;                  // int64 class ids, or float 0/1 rows for multi-label
  std::vector<at::Tensor> split_idx;  // train, valid, test: owned local indices
  std::unique_ptr<LinkModel> link;    // scheme adaptive
  std::unique_ptr<BitPolicy> policy;  // quantized modes
};

Trainer::Trainer(Part part, Communicator& comm, const TrainerOptions& opt)
    // The choice reads `part` before Impl's construction moves it.
    : impl_(std::make_unique<Impl>(std::move(part), comm, with_exchange_chosen(opt, part, comm))) {}

Trainer::~Trainer() = default;

EpochStats Trainer::train_epoch(int epoch) {
  Impl& s = *impl_;
  // A stream guard around training would silently reorder libtorch's work against the runtime's
  // kernels and exchanges, which all run on the default stream.
  ADAQP_CHECK(computes_on_default_stream(s.opt.device),
              "libtorch's current CUDA stream must be the default stream during training");
  const double t0 = steady_now_s();
  s.graph.reset_comm_stats();
  at::Tensor loss;
  {
    const QuantPlanScope quantized(
        s.graph, s.policy != nullptr ? &s.policy->plan(epoch, s.graph.message_traces()) : nullptr);
    s.flat_grad.zero_();  // every gradient at once (Optimizer::zero_grad cannot keep views)
    if (const at::Tensor& e = s.model->local_embedding(); e.defined()) e.mutable_grad().zero_();
    ForwardMode mode;
    mode.training = true;
    mode.key.seed = s.opt.seed;
    mode.key.epoch = static_cast<uint32_t>(epoch);
    loss = s.local_loss(s.model->forward(s.graph, mode));
    loss.backward();
    // The exchanges first, bounded by the timeout: reading the loss waits for the device, which
    // waits for them.
    s.graph.settle();
  }
  double global_loss = loss.item<double>();
  const double t_reduce = steady_now_s();
  s.comm.allreduce_sum(&global_loss, 1);
  s.allreduce_gradients();
  const double reduce_s = steady_now_s() - t_reduce;
  s.optimizer->step();
  // On a GPU the step is only enqueued: the epoch ends when its kernels have run.
  kernels::synchronize(s.opt.device);

  const CommStats& cs = s.graph.comm_stats();
  const AggregationStats& as = s.graph.aggregation_stats();
  const auto layers = static_cast<size_t>(s.opt.model.layers);
  EpochStats st;
  // The policy's statistics (collective) are the epoch's work too: the epoch ends after them.
  if (s.policy != nullptr) {
    if (const AssignStats* a = s.policy->finish_epoch(cs, s.graph.message_traces())) {
      st.adaptive = true;
      st.assign = *a;
    }
  }
  st.epoch = epoch;
  st.loss = global_loss;
  st.epoch_time_s = steady_now_s() - t0;
  st.local_agg_time_s = as.local_agg_time_s;
  st.halo_agg_time_s = as.halo_agg_time_s;
  st.quant_time_s = cs.quant_time_s;
  st.codec_setup_time_s = cs.codec_setup_time_s;
  st.comm_time_s = cs.comm_time_s;
  st.exposed_comm_time_s = cs.exposed_time_s;
  st.reduce_time_s = reduce_s;
  st.compute_time_s = st.epoch_time_s - st.exposed_comm_time_s - st.reduce_time_s;
  st.dense_time_s = st.compute_time_s - st.local_agg_time_s - st.halo_agg_time_s;
  st.bytes_sent = cs.bytes_sent;
  st.bytes_forward = cs.bytes_forward;
  st.bytes_backward = cs.bytes_backward;
  st.bytes_forward.resize(layers, 0);
  st.bytes_backward.resize(layers, 0);
  st.comm_forward_s = cs.comm_forward_s;
  st.comm_backward_s = cs.comm_backward_s;
  st.comm_forward_s.resize(layers, 0);
  st.comm_backward_s.resize(layers, 0);
  return st;
}

EvalScores Trainer::evaluate() {
  Impl& s = *impl_;
  const Part& p = s.graph.part();
  const at::Tensor logits = impl_->eval_logits();
  EvalScores scores;
  scores.valid_loss = s.local_loss(logits, 1).item<double>();
  s.comm.allreduce_sum(&scores.valid_loss, 1);
  double* out[3] = {&scores.train, &scores.valid, &scores.test};
  if (s.metric == ScoreMetric::kRocAuc) {
    const at::Tensor host = logits.to(at::kCPU).contiguous();
    const RocAucSums auc =
        distributed_roc_auc(s.comm, host.data_ptr<float>(), p.multilabels.data(), host.size(0),
                            p.num_classes, {&p.train_idx, &p.valid_idx, &p.test_idx});
    for (int k = 0; k < 3; ++k) *out[k] = auc.mean(k);
    return scores;
  }
  if (p.multilabel) {
    // Per split: true positives, false positives, false negatives.
    int64_t counts[9] = {};
    const at::Tensor pred = logits > 0;
    const at::Tensor truth = s.labels > 0.5;
    for (int k = 0; k < 3; ++k) {
      const at::Tensor pk = pred.index_select(0, s.split_idx[k]);
      const at::Tensor tk = truth.index_select(0, s.split_idx[k]);
      counts[3 * k] = at::logical_and(pk, tk).sum().item<int64_t>();
      counts[3 * k + 1] = at::logical_and(pk, at::logical_not(tk)).sum().item<int64_t>();
      counts[3 * k + 2] = at::logical_and(at::logical_not(pk), tk).sum().item<int64_t>();
    }
    s.comm.allreduce_sum(counts, 9);
    for (int k = 0; k < 3; ++k) {
      *out[k] = ratio(2 * counts[3 * k], 2 * counts[3 * k] + counts[3 * k + 1] + counts[3 * k + 2]);
    }
    return scores;
  }
  int64_t correct[3] = {};
  const at::Tensor pred = logits.argmax(1);
  for (int k = 0; k < 3; ++k) {
    correct[k] = pred.index_select(0, s.split_idx[k])
                     .eq(s.labels.index_select(0, s.split_idx[k]))
                     .sum()
                     .item<int64_t>();
  }
  s.comm.allreduce_sum(correct, 3);
  for (int k = 0; k < 3; ++k) *out[k] = ratio(correct[k], p.global_split_counts[k]);
  return scores;
}

NodeRows Trainer::predict() {
  const bool multilabel = impl_->graph.part().multilabel;
  const at::Tensor logits = impl_->eval_logits();
  const at::Tensor values =
      (multilabel ? (logits > 0).to(at::kByte) : logits.argmax(1)).to(at::kCPU).contiguous();
  NodeRows rows;
  rows.dtype = multilabel ? NpyDtype::kUInt8 : NpyDtype::kInt64;
  rows.columns = multilabel ? logits.size(1) : 0;
  const auto* first = static_cast<const uint8_t*>(values.data_ptr());
  rows.bytes.assign(first, first + values.nbytes());
  return rows;
}

std::string Trainer::metric_name() const {
  return to_string(impl_->metric);
}

std::vector<float> Trainer::parameter_values() const {
  std::vector<float> values;
  for (const at::Tensor& p : impl_->model->parameters()) {
    const at::Tensor c = p.detach().to(at::kCPU).contiguous();
    values.insert(values.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return values;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> Trainer::parameter_shapes() const {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const auto& p : impl_->model->named_parameters())
    shapes.emplace_back(p.key(), p.value().sizes().vec());
  return shapes;
}

const Part& Trainer::part() const {
  return impl_->graph.part();
}

const SparseFeatures* Trainer::sparse_layer_input() const {
  const DistGraph& g = impl_->graph;
  return g.sparse_aggregated_features() != nullptr ? g.sparse_aggregated_features()
                                                   : g.sparse_features();
}

const Boundary& Trainer::boundary() const {
  return impl_->graph.boundary();
}

ExchangeLayout Trainer::exchange_layout() const {
  return impl_->opt.exchange;
}

LayerExchange Trainer::layer_exchange(int layer) const {
  return impl_->model->exchange(layer, graph_options(impl_->opt));
}

int Trainer::num_layers() const {
  return impl_->opt.model.layers;
}

const Device& Trainer::device() const {
  return impl_->opt.device;
}

int64_t Trainer::full_precision_bytes_per_epoch() const {
  const Boundary& b = impl_->graph.boundary();
  return exchange_bytes(impl_->model, num_layers(), graph_options(impl_->opt), b.sends(),
                        b.recvs());
}

bool Trainer::progress_thread() const {
  return impl_->graph.exchanger().progress_thread();
}

const LinkModel* Trainer::link_model() const {
  return impl_->link.get();
}

torch::nn::Module& Trainer::model() {
  return *impl_->model;
}

torch::optim::Adam& Trainer::optimizer() {
  return *impl_->optimizer;
}

bool Trainer::has_embedding() const {
  return impl_->model->local_embedding().defined();
}

void Trainer::save_embedding(const std::string& path, const EmbeddingOrigin& origin,
                             const ModelSnapshot* best) const {
  save_embedding_rows(path, origin, impl_->model->options().embedding.gids,
                      impl_->model->local_embedding(), *impl_->optimizer,
                      best != nullptr ? &best->embedding : nullptr);
}

void Trainer::load_embedding(const std::string& checkpoint, int ranks,
                             const EmbeddingOrigin& origin, ModelSnapshot* best) {
  load_embedding_rows(checkpoint, ranks, origin, impl_->graph.part().global_num_nodes,
                      impl_->model->options().embedding.gids, impl_->model->local_embedding(),
                      *impl_->optimizer, best != nullptr ? &best->embedding : nullptr);
}

ModelSnapshot Trainer::snapshot(int epoch) const {
  ModelSnapshot s;
  s.epoch = epoch;
  for (const at::Tensor& p : impl_->model->parameters()) s.params.push_back(p.detach().clone());
  if (const at::Tensor& e = impl_->model->local_embedding(); e.defined())
    s.embedding = e.detach().clone();
  return s;
}

void Trainer::restore(const ModelSnapshot& s) {
  std::vector<at::Tensor> params = impl_->model->parameters();
  const at::Tensor& embedding = impl_->model->local_embedding();
  ADAQP_CHECK(s.params.size() == params.size() && s.embedding.defined() == embedding.defined(),
              "a snapshot of this model");
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(s.params[i]);
  if (embedding.defined()) {
    at::Tensor target = embedding;
    target.copy_(s.embedding);
  }
}

int64_t Trainer::num_parameters() const {
  int64_t n = 0;
  for (const at::Tensor& p : impl_->model->parameters()) n += p.numel();
  return n;
}

}  // namespace adaqp
