// The named choices of a job: configuration text to values, parsed once where the configuration
// is read (job_config.cpp); past that boundary the code sees only these enums.
#pragma once

#include <string>

namespace adaqp {

// communication.mode (docs/design.md, section 7): Vanilla (full precision, no overlap), AdaQP-q
// (quantized), AdaQP-p (overlapped), AdaQP (both).
enum class CommMode { kVanilla, kQuant, kOverlap, kAdaqp };

// Training messages are quantized (AdaQP-q, AdaQP).
constexpr bool quantizes(CommMode m) {
  return m == CommMode::kQuant || m == CommMode::kAdaqp;
}
// Exchanges overlap the A_local work (AdaQP-p, AdaQP).
constexpr bool overlaps(CommMode m) {
  return m == CommMode::kOverlap || m == CommMode::kAdaqp;
}

// communication.scheme: how the quantized modes choose each message's bit-width: the solver
// (adaptive), or the ablations uniform (communication.bits) and random (uniform over the widths
// of quant/widths.h).
enum class BitScheme { kAdaptive, kUniform, kRandom };

// communication.exchange: what carries a cut edge j -> i (partition/boundary.h): rows (the
// source row h_j, one per boundary node and peer), cover (per pair of parts, a minimum vertex
// cover of the cut edges: source rows and partial sums the sender computes;
// exchange/cover_layout.h) or relation_first (layers that aggregate each relation on their own:
// rows transformed by each relation's weight before they travel, per pair of parts a minimum cover
// of transformed source rows and destinations' partial sums; exchange/relation_first_layout.h);
// auto: relation_first where it moves fewer bytes per epoch than rows (train/trainer.h), else rows.
enum class ExchangeLayout { kRows, kCover, kRelationFirst, kAuto };

// communication.solve_schedule: where the adaptive scheme's width solve runs after its first one:
// inline (before the epoch that uses its widths, on the epoch's critical path), background (a
// thread of its own beside the epoch; the widths one epoch later: assign/adaptive_policy.h), or
// auto: background where the epoch runs on a GPU (the host thread idles meanwhile), inline on the
// CPU (the epoch keeps the cores busy: a solve beside it only moves its time).
enum class SolveSchedule { kAuto, kInline, kBackground };

// training.recompute: what backward makes again instead of keeping from forward. aggregations: a
// layer that aggregates before its dense product keeps its input and the halo rows it received
// instead of A·h, and recomputes A·h in backward (no second exchange; docs/memory.md).
enum class Recompute { kNone, kAggregations };

// training.precision: the dense products on CUDA. fp32: IEEE float (cuBLAS without tensor-core
// rounding); tf32: TF32 tensor cores (Ampere and later), faster and rounded to 10 mantissa bits.
// The CPU computes in fp32 either way.
enum class ComputePrecision { kFp32, kTf32 };

// training.metric: how evaluate() scores a split. auto: accuracy for class ids, F1-micro for
// multi-label data; rocauc (multi-label data only): the mean over tasks of each task's ROC-AUC, as
// OGB scores ogbn-proteins (train/roc_auc.h).
enum class ScoreMetric { kAuto, kAccuracy, kF1Micro, kRocAuc };
// The metric that scores labels of the kind given (auto resolved); ConfigError naming
// training.metric when `metric` does not fit them (accuracy needs class ids, f1_micro and rocauc
// multi-label data).
ScoreMetric resolve_score_metric(ScoreMetric metric, bool multilabel);

// model.type: the layer of every layer of the model (model/conv.h): GCN, GraphSAGE-mean, GAT or
// R-GCN (heterogeneous graphs).
enum class ModelType { kGcn, kSage, kGat, kRgcn };

// model.featureless: the input rows of a heterogeneous graph's node types without features: zeros
// (the homogeneous view's), or a learned embedding per node (Heta's "missing features").
enum class FeaturelessInput { kZeros, kEmbedding };

// What the job's keys may ask of a model type, for the configuration's checks: one row per type
// beside its name (src/common/choices.cpp); a new type states its rules there, the checks stay.
struct ModelTypeRules {
  bool attention;   // model.heads and model.attention_dropout apply
  bool relational;  // aggregates each relation on its own: needs node types and relations;
                    // model.num_bases applies
  // Why its messages cannot travel as partial sums (communication.exchange: cover); null: they can.
  const char* no_partial_sums;
  // Why training.recompute saves no memory with it; null: it saves some.
  const char* no_recompute;
};
const ModelTypeRules& model_type_rules(ModelType type);
// The names of the model types whose rules satisfy `pred`, joined by ", " (for messages).
std::string model_types_where(bool (*pred)(const ModelTypeRules&));

// training.device: where the epoch runs; auto is cuda when the build has CUDA and NCCL and every
// rank can have a GPU, else cpu (config/placement.h).
enum class DeviceChoice { kAuto, kCpu, kCuda };

// communication.backend: the transport of the exchanges; auto is nccl on cuda, mpi on cpu.
enum class Backend { kAuto, kMpi, kNccl };

// output.log_level.
enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// partition.method: METIS, a uniformly random owner per node, contiguous ranges of node ids, or
// PT-Scotch run by all ranks of the job on slices of the graph (partition/ptscotch_partitioner.h).
enum class PartitionMethod { kMetis, kRandom, kContiguous, kPtscotch };

// partition.distribute: how a rank gets its part (partition/obtain_part.h): auto reads it
// from partition.dir where that directory is visible and receives it from rank 0 elsewhere; shared
// requires every rank to read partition.dir; scatter has rank 0 send every other rank its part.
enum class PartDistribution { kAuto, kShared, kScatter };

// dataset.format: a loader (graph/dataset.h); auto detects it from the files at dataset.path (no
// path: the generator).
enum class DatasetFormat { kAuto, kOgb, kNumpy, kGraphsaint, kSynthetic };

// dataset.features_from_edges: node features made from the edges' features (OGB layouts' edge-feat,
// as ogbn-proteins carries them) instead of read from node-feat: none (read node-feat), or each
// node's mean or sum of the features of the edges that end at it (graph/dataset.h).
enum class FeaturesFromEdges { kNone, kMean, kSum };

// The name of each value, as the configuration spells it (the tables of choices.cpp;
// docs/configuration.md lists them by key).
const char* to_string(CommMode mode);
const char* to_string(BitScheme scheme);
const char* to_string(ExchangeLayout layout);
const char* to_string(SolveSchedule schedule);
const char* to_string(Recompute recompute);
const char* to_string(ComputePrecision precision);
const char* to_string(ScoreMetric metric);
const char* to_string(ModelType type);
const char* to_string(FeaturelessInput input);
const char* to_string(DeviceChoice device);
const char* to_string(Backend backend);
const char* to_string(LogLevel level);
const char* to_string(PartitionMethod method);
const char* to_string(PartDistribution distribution);
const char* to_string(DatasetFormat format);
const char* to_string(FeaturesFromEdges reduce);

// The value named by `text`; ConfigError "must be one of ..." otherwise (the caller names the key).
CommMode parse_comm_mode(const std::string& text);
BitScheme parse_bit_scheme(const std::string& text);
ExchangeLayout parse_exchange_layout(const std::string& text);
SolveSchedule parse_solve_schedule(const std::string& text);
Recompute parse_recompute(const std::string& text);
ComputePrecision parse_precision(const std::string& text);
ScoreMetric parse_score_metric(const std::string& text);
ModelType parse_model_type(const std::string& text);
FeaturelessInput parse_featureless_input(const std::string& text);
DeviceChoice parse_device_choice(const std::string& text);
Backend parse_backend(const std::string& text);
LogLevel parse_log_level(const std::string& text);
PartitionMethod parse_partition_method(const std::string& text);
PartDistribution parse_part_distribution(const std::string& text);
DatasetFormat parse_dataset_format(const std::string& text);
FeaturesFromEdges parse_features_from_edges(const std::string& text);

}  // namespace adaqp
