// The graph context of one worker: its Part, the normalised adjacency split into A_local (columns:
// owned nodes) and A_halo (columns: halo nodes), their transposes, and the halo exchanger.
// Aggregation follows design notes section 4: start the exchange, multiply by A_local (while the
// messages are in flight when overlapping; see HaloExchanger for the schedules), then wait and add
// A_halo times the halo rows. Backward mirrors it. Messages travel at full precision unless a
// QuantPlan is set (training epochs of the quantized modes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/model/bit_assignment.h"
#include "adaqp/model/halo_exchanger.h"
#include "adaqp/partition/part.h"

namespace adaqp {

// How in-neighbours are weighted, from GLOBAL degrees (the whole graph's, self-loops included when
// the dataset adds them): GCN a_ij = 1 / sqrt(out_deg(j) * in_deg(i)); mean a_ij = 1 / in_deg(i).
enum class Aggregation { kGcn, kMean };

// The aggregation a model type uses: "gcn" -> kGcn, "sage" -> kMean; ConfigError otherwise.
Aggregation aggregation_for_model(const std::string& model_type);

struct DistGraphOptions {
  Aggregation aggregation = Aggregation::kGcn;
  // Exchange the halo rows of the input features once, at construction, at full precision; layer
  // 0 then needs no exchange per epoch.
  bool cache_features = true;
  // Overlap every exchange with the A_local work (AdaQP-p); otherwise each exchange completes
  // before the A_local work starts.
  bool overlap = false;
};

// The messages this rank sent in the last traced exchange of one layer and direction (QuantPlan::
// trace_ranges): their row width and the value range (max - min) of each, in send order.
struct MessageTrace {
  int64_t width = 0;
  std::vector<float> ranges;
};

// Where the aggregation time went since the last reset (this rank, the calling thread).
struct AggregationStats {
  double local_agg_time_s = 0;  // A_local and A_local^T products
  double halo_agg_time_s = 0;   // A_halo products and adding received gradients
  double local_done_s = 0;      // steady-clock time the last A_local product ended
};

class DistGraph {
 public:
  // Collective (all ranks construct together) when opt.cache_features. `comm` must outlive this.
  DistGraph(Part part, Communicator& comm, const DistGraphOptions& opt);
  DistGraph(const DistGraph&) = delete;
  DistGraph& operator=(const DistGraph&) = delete;

  const Part& part() const { return part_; }
  Communicator& comm() { return comm_; }
  Aggregation aggregation() const { return opt_.aggregation; }
  int64_t num_owned() const { return part_.num_owned(); }

  // y = A h: h and y are num_owned x d. Collective: every rank calls it for the same layer.
  void aggregate(const float* h, int64_t d, float* y, int layer);
  // y = A X for the input features X (num_owned x feat_dim): from the cached halo rows when
  // enabled (no communication), otherwise exchanged like any layer-0 input.
  void aggregate_features(float* y);
  // dh = A^T g: g and dh are num_owned x d. Collective.
  void aggregate_backward(const float* g, int64_t d, float* dh, int layer);

  // Quantizes the messages of the layers and directions `plan` has widths for (every exchange
  // but the cached features), until clear_quant_plan().
  void set_quant_plan(QuantPlan plan);
  void clear_quant_plan();
  // The last traced exchange of `layer` and `dir`; null if none was traced.
  const MessageTrace* message_trace(int layer, Direction dir) const;
  // The normalised adjacency's halo block (rows: owned nodes, columns: halo nodes).
  const kernels::CsrView& a_halo() const { return a_halo_; }

  // Time and bytes of the halo exchanges and aggregations since the last reset.
  const CommStats& comm_stats() const { return exchanger_.stats(); }
  const AggregationStats& aggregation_stats() const { return agg_stats_; }
  void reset_comm_stats();
  const HaloExchanger& exchanger() const { return exchanger_; }

 private:
  Part part_;
  Communicator& comm_;
  DistGraphOptions opt_;
  std::vector<float> local_values_, halo_values_;
  kernels::CsrView a_local_, a_halo_;
  kernels::CsrMatrix a_local_t_, a_halo_t_;
  // The precision of an exchange of rows of width d; sets up its trace when the plan asks.
  Precision precision(int layer, Direction dir, int64_t d);

  HaloExchanger exchanger_;
  bool quantize_ = false;
  QuantPlan plan_;
  std::vector<MessageTrace> traces_[2];  // by direction, then layer
  AggregationStats agg_stats_;
  std::vector<float> halo_features_;  // cached halo rows of the input features
  std::vector<float> halo_buf_;       // halo rows (forward) or halo partial gradients (backward)
};

}  // namespace adaqp
