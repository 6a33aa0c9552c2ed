// The graph context of one worker: its Part, the normalised adjacency split into A_local (columns:
// owned nodes) and A_halo (columns: halo nodes), their transposes (A_local^T on A_local's own
// pattern when that is symmetric, or A_local itself when its values are too), and the halo
// exchanger, all on the worker's device (DistGraphOptions::device).
// Aggregation follows docs/design.md, section 4: start the exchange, multiply by A_local (while the
// messages are in flight when overlapping; see HaloExchanger for the schedules), then wait and add
// A_halo times the halo rows. Backward mirrors it. Messages travel at full precision unless a
// QuantPlan is set (training epochs of the quantized modes).
// On CUDA every product is enqueued on the compute stream (libtorch's, the legacy default stream);
// pointers passed in and out are device memory.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/common/choices.h"
#include "adaqp/common/device.h"
#include "adaqp/exchange/halo_exchanger.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/kernels/stream_timer.h"
#include "adaqp/model/adjacency_block.h"
#include "adaqp/model/edge_list.h"
#include "adaqp/model/halo_layout.h"
#include "adaqp/model/relation_adjacency.h"
#include "adaqp/model/sparse_features.h"
#include "adaqp/partition/boundary.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct DistGraphOptions {
  // The normalisation of the adjacency this graph aggregates with (required; it must outlive the
  // graph): the model's layers' (conv_norm).
  const EdgeNorm* norm = nullptr;
  // Exchange the halo rows of the input features once, at construction, at full precision, and
  // compute A X there (exact: the features never change); layer 0 then needs no exchange and no
  // product per epoch. Off: A X is exchanged and computed on every call (the reference's volume).
  bool cache_features = true;
  // Keep the input features X after A X is cached (a model that reads X itself, GraphSAGE's root
  // term, needs them); otherwise they are freed once A X is made. Without the cache they are kept.
  bool keep_features = true;
  // Overlap every exchange with the A_local work (AdaQP-p); otherwise each exchange completes
  // before the A_local work starts.
  bool overlap = false;
  Device device;
  // What carries the cut edges (model/halo_layout.h): with kCover, construction is collective
  // (exchange/cover_layout.h) and each forward exchange first forms the sent rows S h; with
  // kRelationFirst (relational layers only), construction is collective
  // (exchange/relation_first_layout.h) and the layers form the rows they send.
  ExchangeLayout exchange = ExchangeLayout::kRows;
  // The layers multiply by A (GCN, GraphSAGE). Off (attention, which reads only A's pattern:
  // edges()): A stays in host memory, its transposes are not built, and the aggregation calls are
  // refused; requires no A X cache (cache_features off, or relational) and a layout whose sent
  // rows are node rows or formed by the layers (rows, relation_first).
  bool products = true;
  // The layers aggregate each relation on their own (R-GCN; a heterogeneous part): the feature
  // cache is then layer 0's aggregation of X per (node, relation) pair (relation_features), not
  // A X, and the relation_first layout applies.
  bool relational = false;
  // Keep layer 0's constant inputs as sparse matrices when at most kMaxSparseFeatureDensity of
  // each is non-zero: the cached A X (sparse_aggregated_features()) and, where the layers read it,
  // X (sparse_features()); both or neither. Not without the feature cache when there are products
  // (X then travels every epoch, dense).
  bool sparse_features = true;
};

// Where the aggregation time went since the last reset (this rank; on CUDA, on the device).
struct AggregationStats {
  double local_agg_time_s = 0;  // A_local and A_local^T products
  double halo_agg_time_s = 0;   // A_halo products and adding received gradients
  double local_done_s = 0;      // steady-clock time the last A_local product ended (CPU; CUDA:
                                // was enqueued)
};

class DistGraph {
 public:
  // Collective (all ranks construct together) when it caches A X (opt.cache_features, not
  // relational) or its layout agrees its rows with the peers (cover, relation_first).
  // `comm` must outlive this.
  DistGraph(Part part, Communicator& comm, const DistGraphOptions& opt);
  ~DistGraph();
  DistGraph(const DistGraph&) = delete;
  DistGraph& operator=(const DistGraph&) = delete;

  const Part& part() const { return part_; }
  // The rows the halo exchanges send and receive (the exchange layout's).
  const Boundary& boundary() const;
  const Device& device() const { return opt_.device; }
  const DistGraphOptions& options() const { return opt_; }
  const EdgeNorm& norm() const { return *opt_.norm; }
  int64_t num_owned() const { return part_.num_owned(); }

  // The input features X (num_owned x feat_dim; undefined once freed, see
  // DistGraphOptions::keep_features, or when kept sparse) and the owned nodes' global ids (the
  // dropout keys), on the device. On a GPU the part's host copy of X is freed; on the CPU X is
  // that copy.
  const at::Tensor& features() const { return features_; }
  // X as a sparse matrix (DistGraphOptions::sparse_features, where the layers read X), or null.
  const SparseFeatures* sparse_features() const { return sparse_features_.get(); }
  const at::Tensor& owned_gids() const { return owned_gids_; }
  // Whether start-up made X dense: not where the part holds it as CSR and layer 0 reads it sparse
  // on the host (then its dense matrix, most of a bag-of-words part's memory, never exists).
  bool made_features_dense() const { return made_features_dense_; }

  // y = A h: h and y are num_owned x d. Collective: every rank calls it for the same layer.
  void aggregate(const float* h, int64_t d, float* y, int layer);
  // aggregate in three steps, so that the caller can work on the central rows (rows
  // [0, part().num_central), final after aggregate_local: they have no halo in-neighbours) while
  // the halo rows travel: begin starts the exchange of h's boundary rows (and completes it unless
  // overlapping), aggregate_local computes y = A_local h, end waits for the halo rows and adds
  // A_halo h_halo into the marginal rows. h must stay untouched until end; y but for its central
  // rows from aggregate_local until end. The halo rows are held from begin to end only.
  void begin_aggregate(const float* h, int64_t d, int layer);
  void aggregate_local(const float* h, int64_t d, float* y);
  // `halo_rows` (when given) receives the halo rows (num_halo x d, flat) instead of their being
  // freed, for aggregate_again.
  void end_aggregate(int64_t d, float* y, at::Tensor* halo_rows = nullptr);
  // y = A h again from h and the halo rows an aggregation received (no exchange): the same
  // products in the same order, so the same values.
  void aggregate_again(const float* h, const at::Tensor& halo_rows, int64_t d, float* y);
  // Whether exchanges overlap the caller's work (DistGraphOptions::overlap, unless the quantization
  // plan asks for Vanilla's schedule: set_quant_plan); otherwise begin_* completes them, and a
  // caller can order its allocations to hold less at once.
  bool overlaps() const { return exchanger_.overlaps(); }
  // A X (num_owned x feat_dim): the start-up product with the feature cache, else exchanged and
  // computed now (collective then). Refused when it is kept sparse.
  const at::Tensor& aggregate_features();
  // The cached A X as a sparse matrix (DistGraphOptions::sparse_features), or null.
  const SparseFeatures* sparse_aggregated_features() const {
    return sparse_aggregated_features_.get();
  }
  // dh = A^T g: g and dh are num_owned x d. Collective.
  void aggregate_backward(const float* g, int64_t d, float* dh, int layer);
  // aggregate_backward in two halves, so that the caller can compute what does not depend on dh
  // (a layer's weight gradient) while the partial gradients travel: begin computes the halo rows
  // A_halo^T g (which reads only g's marginal rows) and starts sending them; end computes
  // A_local^T g (still overlapped), waits and adds what the peers sent. g's marginal rows must
  // stay untouched in between; its central rows may be written until end.
  void begin_aggregate_backward(const float* g, int64_t d, int layer);
  void end_aggregate_backward(const float* g, int64_t d, float* dh);

  // For layers that weigh the edges themselves (attention; rows layout only):
  // The received rows of h (num_owned x d, contiguous; the halo nodes', received rows x d) for
  // layer `layer`: its forward exchange alone, no product, in two steps like an aggregation's, so
  // that the caller can work on the central rows in between (begin does the whole exchange when
  // not overlapping). The graph holds h until end (also when the caller fails in between); h must
  // stay untouched until then. Collective.
  void begin_halo_rows(const at::Tensor& h, int layer);
  at::Tensor end_halo_rows(const at::Tensor& h);  // h: begin's tensor, or a view of it
  // For layers that form the rows they send (a layout whose layer_forms_rows: relation_first):
  // begin_formed_rows sends `rows` (boundary().sends() x d, send order, contiguous) like
  // begin_halo_rows, end_halo_rows(rows) returns the received rows.
  void begin_formed_rows(const at::Tensor& rows, int layer);
  // Sends the gradients of the received rows (received rows x d, contiguous; held until end)
  // back to their owners for layer `layer`, in two steps: begin starts it (does all of it when not
  // overlapping), end waits and adds what the peers sent into dh (num_owned x d) at the sent rows;
  // the caller can work in between. Collective. With formed rows, end_formed_gradients instead
  // returns what the peers sent (sent rows x d, send order).
  void begin_halo_gradients(const at::Tensor& halo_grad, int layer);
  void end_halo_gradients(const at::Tensor& dh);
  at::Tensor end_formed_gradients();
  // Every in-edge of the owned nodes (model/edge_list.h), built on first use.
  using Edges = EdgeList;
  const Edges& edges();
  // For layers that aggregate each relation on its own (R-GCN; a heterogeneous part, the rows or
  // relation_first layout): the adjacency by relation over the owned and the received rows
  // (model/relation_adjacency.h), built on first use.
  RelationAdjacency& relation_adjacency();
  // With DistGraphOptions::relational and the feature cache: layer 0's aggregation of X per pair,
  // Z = local() X + halo() X_halo, exact, kept without its zero rows (PairFeatures). Built on
  // first use: collective then (X's halo rows travel once, at full precision, over the rows layout
  // whatever the graph's).
  const PairFeatures& relation_features();

  // Quantizes the messages of the layers and directions `plan` has widths for (every exchange
  // but the cached features) until the next call; nullptr: full precision. `plan` must stay alive
  // and unchanged meanwhile (a BitPolicy's plan is: policy.h); its `overlap` false runs Vanilla's
  // schedule meanwhile. QuantPlanScope below sets and clears it around a training epoch.
  void set_quant_plan(const QuantPlan* plan);
  // The traced exchanges so far (settled), by direction and layer.
  const MessageTraces& message_traces() const { return traces_; }
  // The normalised adjacency's halo block over the received rows (rows: owned nodes; columns: the
  // halo nodes, or with the cover layout its received rows, partial sums at coefficient 1), host
  // memory.
  const kernels::CsrView& a_halo() const;
  // The exchange layout's S (rows: the sent rows; columns: owned nodes) where it forms the sent
  // rows (cover), host memory; else null.
  const kernels::CsrView* send_matrix() const;

  // Completes the bookkeeping of the exchanges so far (HaloExchanger::settle): the traces and
  // statistics are then final.
  void settle();
  // Time and bytes of the halo exchanges and aggregations since the last reset (settles first).
  const CommStats& comm_stats();
  const AggregationStats& aggregation_stats();
  void reset_comm_stats();
  HaloExchanger& exchanger() { return exchanger_; }

 private:
  // The precision of an exchange of rows of width d; sets up its trace when the plan asks.
  Precision precision(int layer, Direction dir, int64_t d);
  // A new halo buffer of received rows x d floats (freed once its exchange no longer needs it).
  float* halo_buffer(int64_t d);
  // Starts the forward exchange of h's rows into `halo` (the layout forms the sent rows first).
  void start_forward(const float* h, int64_t d, float* halo, int layer, const Precision& p);
  // A_local^T and A_halo^T for the backward products.
  void build_transposes();
  // features_ from the part's features (made dense first where the part holds them sparse).
  void use_dense_features();
  // The exchange of X's rows that caches A X, from X as CSR: into halo_features_.
  void exchange_sparse_rows(const SparseFeatures& x);
  // DistGraphOptions::sparse_features: X and A X as sparse matrices, freeing the dense ones (`x`:
  // X's, where the constructor made it already).
  void make_sparse_inputs(std::optional<SparseFeatures> x);
  // Refuses `what` (an aggregation call) on a graph built without products.
  void require_products(const char* what) const;

  Part part_;
  Communicator& comm_;
  DistGraphOptions opt_;
  // The exchange layout: the rows exchanged, the halo block's values, forming and folding them.
  std::unique_ptr<HaloLayout> layout_;
  std::vector<float> local_values_, local_t_values_;
  // a_local_t_ is null when A_local is its own transpose.
  std::unique_ptr<AdjacencyBlock> a_local_, a_halo_, a_local_t_, a_halo_t_;
  const QuantPlan* plan_ = nullptr;
  MessageTraces traces_;
  kernels::StreamTimer local_timer_, halo_timer_;
  AggregationStats agg_stats_;
  at::Tensor features_, owned_gids_;
  bool made_features_dense_ = false;
  at::Tensor features_product_;  // A X, dense
  // X and A X kept sparse (then features_ and features_product_ are undefined).
  std::unique_ptr<SparseFeatures> sparse_features_, sparse_aggregated_features_;
  at::Tensor halo_features_;  // cached halo rows of the input features (until A X is made)
  at::Tensor halo_source_;    // the rows a halo-rows exchange sends, from its begin to its end
  int64_t halo_gradients_width_ = -1;  // of the halo gradients sent back, from begin to end
  at::Tensor halo_buf_;  // halo rows (forward) or partial gradients (backward), during an exchange
  Edges edges_;
  std::unique_ptr<RelationAdjacency> relations_;
  std::unique_ptr<PairFeatures> relation_features_;
  // Last, so that it is destroyed first: its destructor waits for exchanges that may still write
  // the buffers above.
  HaloExchanger exchanger_;
};

// Quantizes a graph's training exchanges with `plan` for a scope (e.g. one training epoch) and
// returns it to full precision when the scope ends, however it ends.
class QuantPlanScope {
 public:
  QuantPlanScope(DistGraph& graph, const QuantPlan* plan) : graph_(graph) {
    graph_.set_quant_plan(plan);
  }
  ~QuantPlanScope() { graph_.set_quant_plan(nullptr); }
  QuantPlanScope(const QuantPlanScope&) = delete;
  QuantPlanScope& operator=(const QuantPlanScope&) = delete;

 private:
  DistGraph& graph_;
};

}  // namespace adaqp
