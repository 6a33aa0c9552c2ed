#include "adaqp/common/choices.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

template <typename E, size_t N>
using Table = std::array<std::pair<E, const char*>, N>;

constexpr Table<CommMode, 4> kModes = {{
    {CommMode::kVanilla, "vanilla"},
    {CommMode::kQuant, "quant"},
    {CommMode::kOverlap, "overlap"},
    {CommMode::kAdaqp, "adaqp"},
}};
constexpr Table<BitScheme, 3> kSchemes = {{
    {BitScheme::kAdaptive, "adaptive"},
    {BitScheme::kUniform, "uniform"},
    {BitScheme::kRandom, "random"},
}};
constexpr Table<ExchangeLayout, 4> kExchangeLayouts = {{
    {ExchangeLayout::kRows, "rows"},
    {ExchangeLayout::kCover, "cover"},
    {ExchangeLayout::kRelationFirst, "relation_first"},
    {ExchangeLayout::kAuto, "auto"},
}};
constexpr Table<SolveSchedule, 3> kSolveSchedules = {{
    {SolveSchedule::kAuto, "auto"},
    {SolveSchedule::kInline, "inline"},
    {SolveSchedule::kBackground, "background"},
}};
constexpr Table<PartDistribution, 3> kPartDistributions = {{
    {PartDistribution::kAuto, "auto"},
    {PartDistribution::kShared, "shared"},
    {PartDistribution::kScatter, "scatter"},
}};
constexpr Table<ComputePrecision, 2> kPrecisions = {{
    {ComputePrecision::kFp32, "fp32"},
    {ComputePrecision::kTf32, "tf32"},
}};
constexpr Table<FeaturesFromEdges, 3> kFeaturesFromEdges = {{
    {FeaturesFromEdges::kNone, "none"},
    {FeaturesFromEdges::kMean, "mean"},
    {FeaturesFromEdges::kSum, "sum"},
}};
constexpr Table<ScoreMetric, 4> kScoreMetrics = {{
    {ScoreMetric::kAuto, "auto"},
    {ScoreMetric::kAccuracy, "accuracy"},
    {ScoreMetric::kF1Micro, "f1_micro"},
    {ScoreMetric::kRocAuc, "rocauc"},
}};
constexpr Table<Recompute, 2> kRecompute = {{
    {Recompute::kNone, "none"},
    {Recompute::kAggregations, "aggregations"},
}};
constexpr Table<FeaturelessInput, 2> kFeaturelessInputs = {{
    {FeaturelessInput::kZeros, "zeros"},
    {FeaturelessInput::kEmbedding, "embedding"},
}};
constexpr Table<ModelType, 4> kModelTypes = {{
    {ModelType::kGcn, "gcn"},
    {ModelType::kSage, "sage"},
    {ModelType::kGat, "gat"},
    {ModelType::kRgcn, "rgcn"},
}};
constexpr std::array<std::pair<ModelType, ModelTypeRules>, 4> kModelTypeRules = {{
    {ModelType::kGcn,
     {false, false, nullptr, "a GCN layer keeps one n x hidden tensor for backward either way"}},
    {ModelType::kSage, {false, false, nullptr, nullptr}},
    {ModelType::kGat,
     {true, false,
      "attention weighs every in-edge by its source row, which a partial sum does not keep",
      "an attention layer aggregates no kept input"}},
    {ModelType::kRgcn,
     {false, true,
      "an R-GCN layer aggregates each relation on its own, and the cover's partial sums mix the "
      "relations of a row",
      "an R-GCN layer keeps its per-relation aggregations for backward (recomputing them is not "
      "built)"}},
}};
constexpr Table<DeviceChoice, 3> kDevices = {{
    {DeviceChoice::kAuto, "auto"},
    {DeviceChoice::kCpu, "cpu"},
    {DeviceChoice::kCuda, "cuda"},
}};
constexpr Table<Backend, 3> kBackends = {{
    {Backend::kAuto, "auto"},
    {Backend::kMpi, "mpi"},
    {Backend::kNccl, "nccl"},
}};
constexpr Table<LogLevel, 6> kLogLevels = {{
    {LogLevel::kTrace, "trace"},
    {LogLevel::kDebug, "debug"},
    {LogLevel::kInfo, "info"},
    {LogLevel::kWarn, "warn"},
    {LogLevel::kError, "error"},
    {LogLevel::kOff, "off"},
}};
constexpr Table<PartitionMethod, 4> kPartitionMethods = {{
    {PartitionMethod::kMetis, "metis"},
    {PartitionMethod::kRandom, "random"},
    {PartitionMethod::kContiguous, "contiguous"},
    {PartitionMethod::kPtscotch, "ptscotch"},
}};
constexpr Table<DatasetFormat, 5> kDatasetFormats = {{
    {DatasetFormat::kAuto, "auto"},
    {DatasetFormat::kOgb, "ogb"},
    {DatasetFormat::kNumpy, "numpy"},
    {DatasetFormat::kGraphsaint, "graphsaint"},
    {DatasetFormat::kSynthetic, "synthetic"},
}};

template <typename E, size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  throw InvariantError("an enum value without a name");
}

template <typename E, size_t N>
E parse(const std::array<std::pair<E, const char*>, N>& table, const std::string& text) {
  std::string names;
  for (const auto& [v, name] : table) {
    if (text == name) return v;
    names += names.empty() ? name : std::string(", ") + name;
  }
  throw ConfigError(fmt::format("must be one of {}", names));
}

}  // namespace

#define ADAQP_CHOICE(E, table, parse_fn) \
  const char* to_string(E value) {       \
    return name_of(table, value);        \
  }                                      \
  E parse_fn(const std::string& text) {  \
    return parse(table, text);           \
  }

ADAQP_CHOICE(CommMode, kModes, parse_comm_mode)
ADAQP_CHOICE(BitScheme, kSchemes, parse_bit_scheme)
ADAQP_CHOICE(ExchangeLayout, kExchangeLayouts, parse_exchange_layout)
ADAQP_CHOICE(SolveSchedule, kSolveSchedules, parse_solve_schedule)
ADAQP_CHOICE(Recompute, kRecompute, parse_recompute)
ADAQP_CHOICE(ComputePrecision, kPrecisions, parse_precision)
ADAQP_CHOICE(ScoreMetric, kScoreMetrics, parse_score_metric)
ADAQP_CHOICE(ModelType, kModelTypes, parse_model_type)
ADAQP_CHOICE(FeaturelessInput, kFeaturelessInputs, parse_featureless_input)
ADAQP_CHOICE(DeviceChoice, kDevices, parse_device_choice)
ADAQP_CHOICE(Backend, kBackends, parse_backend)
ADAQP_CHOICE(LogLevel, kLogLevels, parse_log_level)
ADAQP_CHOICE(PartitionMethod, kPartitionMethods, parse_partition_method)
ADAQP_CHOICE(PartDistribution, kPartDistributions, parse_part_distribution)
ADAQP_CHOICE(DatasetFormat, kDatasetFormats, parse_dataset_format)
ADAQP_CHOICE(FeaturesFromEdges, kFeaturesFromEdges, parse_features_from_edges)

#undef ADAQP_CHOICE

ScoreMetric resolve_score_metric(ScoreMetric metric, bool multilabel) {
  if (metric == ScoreMetric::kAuto)
    return multilabel ? ScoreMetric::kF1Micro : ScoreMetric::kAccuracy;
  if ((metric == ScoreMetric::kAccuracy) != multilabel) return metric;
  throw ConfigError(fmt::format(
      "training.metric = {} scores {}, and the dataset's labels are {}: use training.metric = {}",
      to_string(metric), multilabel ? "class ids" : "multi-label data (0/1 per class)",
      multilabel ? "multi-label (0/1 per class)" : "class ids",
      multilabel ? "f1_micro, rocauc or auto" : "accuracy or auto"));
}

const ModelTypeRules& model_type_rules(ModelType type) {
  for (const auto& [t, rules] : kModelTypeRules) {
    if (t == type) return rules;
  }
  throw InvariantError(std::string("model type ") + to_string(type) + " has no rules");
}

std::string model_types_where(bool (*pred)(const ModelTypeRules&)) {
  std::string names;
  for (const auto& [type, rules] : kModelTypeRules) {
    if (pred(rules)) names += (names.empty() ? "" : ", ") + std::string(to_string(type));
  }
  return names;
}

}  // namespace adaqp
