// The YAML job configuration: one struct per section, every field with its default. Parsing is
// strict: an unknown key, a wrong type or an out-of-range value is a ConfigError naming the file,
// the dotted key and the value.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "adaqp/assign/solve.h"
#include "adaqp/common/choices.h"
#include "adaqp/common/timeouts.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/quant/widths.h"

namespace adaqp {

struct ModelConfig {
  ModelType type = ModelType::kGcn;
  int layers = 3;
  int hidden = 64;
  double dropout = 0.5;
  bool layer_norm = false;
  int heads = 1;                   // attention heads of a gat hidden layer
  double attention_dropout = 0.0;  // gat: dropout of the attention weights (GAT's paper: 0.6)
  // rgcn: each relation's weight a combination of this many shared bases (Schlichtkrull et al.'s
  // basis decomposition); 0: one full weight per relation.
  int num_bases = 0;
  // rgcn: the input rows of node types without features (zeros, or a learned embedding per node).
  FeaturelessInput featureless = FeaturelessInput::kZeros;
};

struct TrainingConfig {
  int epochs = 200;
  double lr = 0.01;
  double weight_decay = 5e-4;
  uint64_t seed = 0;
  int eval_every = 1;
  // Early stopping: end the run at the first evaluation at least this many epochs after the best
  // validation score; 0 = train every epoch.
  int patience = 0;
  // Put the parameters of the best validation epoch back after the last one: params.bin and
  // predictions.npy then hold them.
  bool restore_best = false;
  // How a split is scored (common/choices.h): what patience and restore_best follow.
  ScoreMetric metric = ScoreMetric::kAuto;
  int threads = 0;  // compute threads per worker; 0 = cores / workers on this host
  // Where the epoch runs: cpu, cuda (GPU local_rank % visible devices), or auto (cuda when the
  // build has CUDA and NCCL and every rank can have a GPU, else cpu).
  DeviceChoice device = DeviceChoice::kAuto;
  int checkpoint_every = 0;    // write a checkpoint every this many epochs and at the end; 0 = off
  std::string checkpoint_dir;  // empty = <output.dir>/checkpoints
  Recompute recompute = Recompute::kNone;  // aggregations: GraphSAGE only (see choices.h)
  ComputePrecision precision = ComputePrecision::kFp32;  // tf32: CUDA only (see choices.h)
  bool sparse_features = true;  // layer 0 over a sparse A X when mostly zero (sparse_features.h)
};

struct CommunicationConfig {
  Backend backend = Backend::kAuto;  // auto: nccl on cuda, mpi on cpu
  CommMode mode = CommMode::kAdaqp;
  int bits = 8;  // uniform scheme: 2 | 4 | 8
  BitScheme scheme = BitScheme::kAdaptive;
  bool feature_cache = true;  // exchange layer-0 input features once, at full precision
  ExchangeLayout exchange = ExchangeLayout::kAuto;  // auto | rows | cover | relation_first
  double timeout_s = kDefaultTimeoutS;              // bound on every blocking wait
  // Scheme adaptive (docs/design.md, section 6): the allowed widths, the weight of the variance
  // term in the objective, how many consecutive messages of one link share a width, the epochs
  // between solves, the solver (fast | exact), the objective (seconds | normalized) and the drift
  // of an exchange's inputs since its last solve below which a due solve is skipped; where the
  // solve runs (common/choices.h).
  std::vector<int> bit_set = quant::all_widths();
  double lambda = 0.5;
  int group_size = 1;
  int assign_period = 1;
  assign::Solver solver = assign::Solver::kFast;
  assign::Objective objective = assign::Objective::kSeconds;
  double resolve_drift = 0.5;
  SolveSchedule solve_schedule = SolveSchedule::kAuto;
};

struct OutputConfig {
  std::string dir = "runs/default";
  LogLevel log_level = LogLevel::kInfo;
  int progress_every = 0;  // a progress line every this many epochs; 0 = about 20 lines per run
  // Write predictions.npy: what the final parameters predict for every node (train/predictions.h).
  bool predictions = false;
};

struct PartitionConfig {
  PartitionOptions options;
  std::string dir;  // partition directory; empty = <output.dir>/partition
  PartDistribution distribute = PartDistribution::kAuto;
  // Where a rank caches a part it received from rank 0; empty = <system temp dir>/adaqp-parts.
  std::string local_dir;
};

// The embedded default job's dataset: format auto, so a job giving dataset.path loads the layout
// found there and one without it trains the built-in generator's graph with its default options
// (10000 nodes, 8 classes, 64 features, average degree 10, homophily 0.8); plus one self-loop per
// node as GCN expects (the generated graph is already symmetric).
inline DatasetSpec default_dataset_spec() {
  DatasetSpec d;
  d.format = DatasetFormat::kAuto;
  d.transform.self_loops = true;
  return d;
}

// All defaults together are the embedded default job (configs/default.yaml spells it out): the
// synthetic graph, 2 parts by METIS, a 3-layer GCN with hidden size 64 trained for 200 epochs with
// AdaQP (quantized, overlapped exchanges; adaptive bit-widths).
struct JobConfig {
  DatasetSpec dataset = default_dataset_spec();
  PartitionConfig partition;
  ModelConfig model;
  TrainingConfig training;
  CommunicationConfig communication;
  OutputConfig output;
};

// Parses `path` (empty = all defaults, the embedded default job), then applies overrides of the
// form "section.key=value" (value parsed as YAML scalar; nested keys as
// dataset.synthetic.num_nodes=1000), then validates. A missing file, an unknown key (the message
// lists the known keys of its section), a value of the wrong type, an out-of-range value or a
// malformed override is a ConfigError naming the file (or --set), the key and the value. Relative
// paths in the file (dataset.path, partition.dir, training.checkpoint_dir, output.dir) are kept as
// written: they are relative to the working directory.
JobConfig load_job_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The effective configuration as YAML (every key, defaults included); load_job_config of this
// text gives back the same config.
std::string to_yaml(const JobConfig& cfg);

// Every key of the configuration with its value as to_yaml writes it (lists in flow style), in
// to_yaml's order.
std::vector<std::pair<std::string, std::string>> key_values(const JobConfig& cfg);

// The keys of key_values whose value differs from a default JobConfig's, in to_yaml's order.
std::vector<std::pair<std::string, std::string>> changed_key_values(const JobConfig& cfg);

// The data a job reads, as its dataset.* keys and values (dataset.path made absolute, without a
// trailing separator; the generator's keys only for a generated graph; not dataset.format, which
// the data fixes): what a partition directory records of the graph it was made from
// (PartitionOptions::dataset_keys, which load_job_config fills).
std::vector<std::pair<std::string, std::string>> dataset_identity(const JobConfig& cfg);

// The rule that needs the dataset's class count, checked once the partition is known:
// training.recompute with a GraphSAGE model none of whose layers after the first aggregates
// first has no effect, a ConfigError naming the keys and values.
void require_recompute_effect(const JobConfig& cfg, int64_t num_classes);
// The rule that needs the dataset's types: a model.type that aggregates each relation on its own
// (rgcn) needs a heterogeneous dataset (num_relations > 0), a ConfigError otherwise.
void require_relations(const JobConfig& cfg, size_t num_relations);
// ConfigError when training.metric does not score the dataset's labels: accuracy needs class ids,
// f1_micro and rocauc multi-label data.
void require_metric_fits(const JobConfig& cfg, bool multilabel);

// The partition directory a job uses (partition.dir, or <output.dir>/partition).
std::string partition_dir(const JobConfig& cfg);

// Where a job caches parts received from rank 0 (partition.local_dir, or
// <system temp dir>/adaqp-parts).
std::string part_cache_dir(const JobConfig& cfg);

// The checkpoint directory a job uses (training.checkpoint_dir, or <output.dir>/checkpoints).
std::string checkpoint_dir(const JobConfig& cfg);

}  // namespace adaqp
