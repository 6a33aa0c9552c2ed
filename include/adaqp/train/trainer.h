// Full-graph training on one worker of W (docs/design.md, sections 4 and 8). Every rank runs the
// same steps: forward, loss, backward, all-reduce of the parameter gradients (sum, on one flat
// buffer whose views the gradients are), Adam step, so all ranks hold identical parameters after
// every step. The loss is the mean over ALL training
// nodes of all ranks: each rank sums its own nodes' losses and divides by the global count
// (softmax cross-entropy; for multi-label data, binary cross-entropy with logits averaged over
// nodes and classes). Evaluation uses full-precision messages and no dropout; its scores come from
// counts summed over ranks (accuracy, or F1-micro for multi-label data).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adaqp/assign/adaptive_policy.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/common/choices.h"
#include "adaqp/common/device.h"
#include "adaqp/model/gnn_options.h"
#include "adaqp/model/layer_exchange.h"
#include "adaqp/partition/part.h"
#include "adaqp/train/link_probe.h"
#include "adaqp/train/predictions.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Adam;
}

namespace adaqp {

struct SparseFeatures;   // model/sparse_features.h
struct ModelSnapshot;    // train/checkpoint.h
struct EmbeddingOrigin;  // train/checkpoint.h

// communication.mode (docs/design.md, section 7): vanilla (full precision, no overlap), overlap
// (AdaQP-p), quant (AdaQP-q), adaqp (both). Training exchanges of the quantized modes use the
// bit-width scheme `scheme` (uniform at `bits`, random over {2, 4, 8} re-drawn every epoch, or
// adaptive: the solver's widths; assign/policy.h); evaluation always exchanges full precision.
struct TrainerOptions {
  // Where the whole epoch runs: the CPU (MPI communicator) or one CUDA device (a device
  // transport: NcclCommunicator). Model, optimizer state, graph, features, labels live there.
  Device device;
  // The model (model.*; recompute_aggregations: training.recompute). in_dim and out_dim are the
  // part's: the trainer sets them.
  GnnOptions model;
  double lr = 0.01;            // training.lr (Adam)
  double weight_decay = 5e-4;  // training.weight_decay
  uint64_t seed = 0;           // training.seed: initial parameters, dropout masks, random widths
  ComputePrecision precision = ComputePrecision::kFp32;  // training.precision
  ScoreMetric metric = ScoreMetric::kAuto;               // training.metric
  bool sparse_features = true;                           // training.sparse_features
  bool cache_features = true;                            // communication.feature_cache
  ExchangeLayout exchange = ExchangeLayout::kAuto;       // communication.exchange
  CommMode mode = CommMode::kVanilla;                    // communication.mode
  BitScheme scheme = BitScheme::kUniform;                // communication.scheme
  int bits = 8;                                          // communication.bits
  AdaptiveOptions adaptive;                              // scheme adaptive
  // Scheme adaptive: per-sender link costs to plan with, alone (reproducible plans); empty = probe
  // them at start-up (link_probe.h) and add each exchange's measured quantization time
  // (assign/adaptive_policy.h).
  std::vector<assign::LinkCost> link_costs;
};

// One training step on this rank; all times are this rank's, in seconds.
//   epoch = local_agg + halo_agg + exposed_comm + reduce + dense
// where dense is everything else (dense layers, loss, optimizer step). Packing and unpacking
// (quant_time_s among them) count as exposed communication when they run on the compute thread;
// on the progress thread (overlap modes) they are hidden unless waited for.
struct EpochStats {
  int epoch = 0;
  double loss = 0;                 // global loss (identical on every rank)
  double epoch_time_s = 0;         // forward + backward + gradient all-reduce + optimizer step
  double compute_time_s = 0;       // epoch - exposed_comm - reduce
  double local_agg_time_s = 0;     // A_local products (forward and backward)
  double halo_agg_time_s = 0;      // A_halo products, adding received gradients
  double dense_time_s = 0;         // the rest of the computation
  double quant_time_s = 0;         // quantization and dequantization, on any thread
  double codec_setup_time_s = 0;   // readying the codecs before exchanges (exchange_stats.h)
  double comm_time_s = 0;          // every exchange from its start to its completion, summed
  double exposed_comm_time_s = 0;  // the compute thread blocked in exchanges
  double reduce_time_s = 0;        // loss and gradient all-reduce
  int64_t bytes_sent = 0;          // halo payload bytes this rank sent
  std::vector<int64_t> bytes_forward, bytes_backward;   // bytes_sent by layer (model.layers each)
  std::vector<double> comm_forward_s, comm_backward_s;  // comm_time_s by layer
  bool adaptive = false;  // scheme adaptive: `assign` holds the plan's statistics
  AssignStats assign;
  // Peak memory of the epoch (training step and evaluation), train/memory_meter.h; set by
  // train_epochs.
  int64_t peak_rss_bytes = 0;
  int64_t device_peak_bytes = 0;  // CUDA
};

// Scores over all ranks (identical on every rank): accuracy, F1-micro or ROC-AUC (training.metric);
// and the loss over the validation nodes of all ranks, defined as the training loss is over the
// training nodes (0 without validation nodes).
struct EvalScores {
  double train = 0, valid = 0, test = 0;
  double valid_loss = 0;
};

// Sets the number of threads of libtorch's operators and of the project's kernels (OpenMP).
void set_compute_threads(int threads);

class Trainer {
 public:
  // Builds the graph context (collective when features are cached) and the model, whose
  // parameters are initialised from training.seed identically on every rank; chooses the exchange
  // layout where opt.exchange is auto (collective for R-GCN: trainer.cpp, with_exchange_chosen);
  // the adaptive scheme also probes the links (unless opt.link_costs is given). ConfigError for an
  // unsupported model type, mode or scheme, a dataset without training nodes or a metric its
  // labels do not fit (config/job_config.h, require_metric_fits).
  Trainer(Part part, Communicator& comm, const TrainerOptions& opt);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One optimisation step; `epoch` keys the dropout masks. Collective.
  EpochStats train_epoch(int epoch);
  // Full-precision forward without dropout; collective.
  EvalScores evaluate();
  // The same forward's prediction for every owned node (local order), as evaluate() scores it:
  // the class of the largest logit (int64), or for multi-label data a row of 0/1 per class
  // (uint8, logit > 0). Collective.
  NodeRows predict();

  // "accuracy", "f1_micro" or "rocauc": TrainerOptions::metric, auto resolved by the labels.
  std::string metric_name() const;
  // Every parameter's values, concatenated in registration order (torch's parameters()).
  std::vector<float> parameter_values() const;
  // The name and shape of each of parameter_values()' parameters, in its order (params.json).
  std::vector<std::pair<std::string, std::vector<int64_t>>> parameter_shapes() const;
  int64_t num_parameters() const;
  // The model and its optimiser, for checkpoints (train/checkpoint.h) and divergence checks.
  torch::nn::Module& model();
  torch::optim::Adam& optimizer();
  // Learned featureless rows (model.featureless: embedding, some type without features): each
  // rank's own, trained by `optimizer` but not among `model`'s parameters, so checkpoints keep
  // them apart (train/checkpoint.h): save writes this rank's rows and their Adam state to `path`
  // (and `best`'s rows, where given) with the checkpoint's `origin`, load takes this rank's nodes'
  // rows from the `ranks` embedding files of checkpoint `checkpoint`, of origin `origin`, once the
  // checkpoint has restored the parameters (and into best->embedding their rows at the best
  // epoch, where given and written).
  bool has_embedding() const;
  void save_embedding(const std::string& path, const EmbeddingOrigin& origin,
                      const ModelSnapshot* best = nullptr) const;
  void load_embedding(const std::string& checkpoint, int ranks, const EmbeddingOrigin& origin,
                      ModelSnapshot* best = nullptr);
  // A copy of the parameters and this rank's learned featureless rows as they are after `epoch`,
  // on their device; restore puts one back (training.restore_best).
  ModelSnapshot snapshot(int epoch) const;
  void restore(const ModelSnapshot& s);

  const Part& part() const;
  // The rows its halo exchanges send and receive, and their layout (communication.exchange).
  const Boundary& boundary() const;
  // Layer 0's input when kept sparse (training.sparse_features): A X for the layers that cache it,
  // else X; null when dense.
  const SparseFeatures* sparse_layer_input() const;
  ExchangeLayout exchange_layout() const;
  // The halo exchanges of layer l in a training epoch (GnnImpl::exchange).
  LayerExchange layer_exchange(int layer) const;
  int num_layers() const;
  // True when the exchanges run on a progress thread (overlap modes, MPI thread support).
  bool progress_thread() const;
  const Device& device() const;
  // Bytes this rank would send per epoch if every exchange of a training step travelled at
  // float32: every layer's boundary rows forward (but the features' with the feature cache) and,
  // where the layer sends gradients back, its halo rows backward.
  int64_t full_precision_bytes_per_epoch() const;
  // The link cost model of the adaptive scheme; null for the other schemes.
  const LinkModel* link_model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adaqp
