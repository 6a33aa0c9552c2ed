#include "adaqp/config/job_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string_view>

#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"
#include "adaqp/common/yaml_document.h"
#include "adaqp/quant/widths.h"

namespace adaqp {
namespace {

// One configuration key: how to parse a YAML value into it and how to print it back (a list key
// writes itself as a flow sequence through `emit` instead of `print`).
struct Field {
  std::string key;
  std::function<void(JobConfig&, const YAML::Node&, const std::string& origin)> parse;
  std::function<std::string(const JobConfig&)> print;
  std::function<void(const JobConfig&, YAML::Emitter&)> emit;
};

constexpr std::string_view kCoreTag = "tag:yaml.org,2002:";

// An explicit tag as it was written (!!int, !mine); "" for a plain ("?") or quoted ("!") scalar.
std::string written_tag(const YAML::Node& n) {
  const std::string& tag = n.Tag();
  if (tag.empty() || tag == "?" || tag == "!") return "";
  if (tag.compare(0, kCoreTag.size(), kCoreTag) == 0) return "!!" + tag.substr(kCoreTag.size());
  return tag;
}

std::string scalar_text(const YAML::Node& n) {
  if (!n.IsScalar()) return n.IsNull() ? "null" : "<" + YAML::Dump(n) + ">";
  const std::string tag = written_tag(n);
  return tag.empty() ? n.Scalar() : tag + " " + n.Scalar();
}

[[noreturn]] void bad_value(const std::string& origin, const std::string& key, const YAML::Node& n,
                            const char* expected) {
  // A value with ': ' or in brackets is a mapping or a list to YAML, which a user meant as text.
  const std::string hint =
      n.IsMap() || n.IsSequence()
          ? fmt::format(" (YAML reads it as a {}: quote the value to give a string)",
                        n.IsMap() ? "mapping" : "list")
          : "";
  throw ConfigError(fmt::format("{}: key '{}' expects {}, got '{}'{}", origin, key, expected,
                                scalar_text(n), hint));
}

// A quoted scalar is a string in YAML ("3" is not 3), as is one tagged so (!!str 3): numbers and
// booleans must be plain, or tagged with one of their own `kinds` (!!int 3). Any other tag is
// refused, not ignored: !!float 3 given to an integer key would otherwise pass for 3.
bool plain_scalar(const YAML::Node& n, std::initializer_list<std::string_view> kinds) {
  if (!n.IsScalar()) return false;
  const std::string tag = written_tag(n);
  if (n.Tag() == "?" || n.Tag().empty()) return true;
  for (std::string_view kind : kinds)
    if (tag == "!!" + std::string(kind)) return true;
  return false;
}

template <typename T>
T parse_integer(const YAML::Node& n, const std::string& origin, const std::string& key) {
  if (!plain_scalar(n, {"int"})) bad_value(origin, key, n, "an integer (unquoted)");
  const std::string& s = n.Scalar();
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range && end == s.data() + s.size()) {
    const std::string range = fmt::format("an integer in [{}, {}]", std::numeric_limits<T>::min(),
                                          std::numeric_limits<T>::max());
    bad_value(origin, key, n, range.c_str());
  }
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    bad_value(origin, key, n, std::is_signed<T>::value ? "an integer" : "a non-negative integer");
  return value;
}

template <typename T>
T parse_value(const YAML::Node& n, const std::string& origin, const std::string& key);

template <>
int parse_value<int>(const YAML::Node& n, const std::string& origin, const std::string& key) {
  return parse_integer<int>(n, origin, key);
}
template <>
int64_t parse_value<int64_t>(const YAML::Node& n, const std::string& origin,
                             const std::string& key) {
  return parse_integer<int64_t>(n, origin, key);
}
template <>
uint64_t parse_value<uint64_t>(const YAML::Node& n, const std::string& origin,
                               const std::string& key) {
  return parse_integer<uint64_t>(n, origin, key);
}
template <>
double parse_value<double>(const YAML::Node& n, const std::string& origin, const std::string& key) {
  if (!plain_scalar(n, {"float", "int"}) || n.Scalar().empty())
    bad_value(origin, key, n, "a number (unquoted)");
  const std::string& s = n.Scalar();
  std::string word = s.substr(s.find_first_not_of("+-") == 0 ? 0 : 1);
  std::transform(word.begin(), word.end(), word.begin(), [](char c) { return std::tolower(c); });
  for (const char* infinite : {"inf", "infinity", ".inf", "nan", ".nan"}) {
    if (word == infinite) bad_value(origin, key, n, "a finite number");
  }
  // Decimal only: strtod also reads hexadecimal ("0x1p-4"), which YAML reads as a string.
  const bool decimal = s.find_first_not_of("0123456789+-.eE") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const double value = decimal ? std::strtod(s.c_str(), &end) : 0.0;
  if (!decimal || end != s.c_str() + s.size()) bad_value(origin, key, n, "a number");
  // ERANGE also marks an underflow (below DBL_MIN, read as a subnormal or 0): a number all the
  // same.
  const bool underflow = errno == ERANGE && std::fabs(value) <= DBL_MIN;
  if ((errno != 0 && !underflow) || !std::isfinite(value))
    bad_value(origin, key, n, "a finite number");
  return value;
}
template <>
bool parse_value<bool>(const YAML::Node& n, const std::string& origin, const std::string& key) {
  if (plain_scalar(n, {"bool"}) && (n.Scalar() == "true" || n.Scalar() == "false"))
    return n.Scalar() == "true";
  bad_value(origin, key, n, "true or false");
}
template <>
std::string parse_value<std::string>(const YAML::Node& n, const std::string& origin,
                                     const std::string& key) {
  if (n.IsNull()) return "";
  const std::string tag = written_tag(n);
  if (tag == "!!null") return "";
  if (!n.IsScalar() || !(tag.empty() || tag == "!!str")) bad_value(origin, key, n, "a string");
  return n.Scalar();
}

std::string print_value(const std::string& v) {
  return v;
}
std::string print_value(bool v) {
  return v ? "true" : "false";
}
template <typename T>
std::string print_value(T v) {
  return fmt::format("{}", v);  // shortest text that reads back to the same number
}

template <typename T>
Field field(const std::string& key, T& (*ref)(JobConfig&)) {
  return {key,
          [key, ref](JobConfig& c, const YAML::Node& n, const std::string& origin) {
            ref(c) = parse_value<T>(n, origin, key);
          },
          [ref](const JobConfig& c) { return print_value(ref(const_cast<JobConfig&>(c))); },
          nullptr};
}

// A key holding one of a set of named values (common/choices.h): `parse` turns the text into the
// value (ConfigError "must be one of ..." otherwise), `name` back.
template <typename E>
Field choice_field(const std::string& key, E& (*ref)(JobConfig&), E (*parse)(const std::string&),
                   const char* (*name)(E)) {
  return {
      key,
      [key, ref, parse](JobConfig& c, const YAML::Node& n, const std::string& origin) {
        const std::string text = parse_value<std::string>(n, origin, key);
        try {
          ref(c) = parse(text);
        } catch (const ConfigError& e) {
          // YAML reads `null`, `~` and nothing at all alike: none of them is ''.
          const std::string shown = n.IsNull() ? "null (no value)" : "'" + text + "'";
          throw ConfigError(fmt::format("{}: {} = {}: {}", origin, key, shown, e.what()));
        }
      },
      [ref, name](const JobConfig& c) { return std::string(name(ref(const_cast<JobConfig&>(c)))); },
      nullptr};
}

// A key holding a list of integers, written [a, b, ...].
Field int_list_field(const std::string& key, std::vector<int>& (*ref)(JobConfig&)) {
  Field f;
  f.key = key;
  f.parse = [key, ref](JobConfig& c, const YAML::Node& n, const std::string& origin) {
    if (!n.IsSequence()) bad_value(origin, key, n, "a list of integers, e.g. [2, 4, 8]");
    std::vector<int> values;
    for (const YAML::Node& item : n) values.push_back(parse_integer<int>(item, origin, key));
    ref(c) = values;
  };
  f.emit = [ref](const JobConfig& c, YAML::Emitter& out) {
    out << YAML::Flow << YAML::BeginSeq;
    for (int v : ref(const_cast<JobConfig&>(c))) out << v;
    out << YAML::EndSeq;
  };
  return f;
}

// Every key, in the order to_yaml prints them.
const std::vector<Field>& fields() {
  using C = JobConfig;
  static const std::vector<Field> all = {
      choice_field<DatasetFormat>(
          "dataset.format", [](C & c) -> auto& { return c.dataset.format; }, parse_dataset_format,
          to_string),
      field<std::string>(
          "dataset.path", [](C & c) -> auto& { return c.dataset.path; }),
      field<std::string>(
          "dataset.split", [](C & c) -> auto& { return c.dataset.split; }),
      choice_field<FeaturesFromEdges>(
          "dataset.features_from_edges",
          [](C & c) -> auto& { return c.dataset.features_from_edges; }, parse_features_from_edges,
          to_string),
      field<bool>(
          "dataset.add_reverse", [](C & c) -> auto& { return c.dataset.transform.add_reverse; }),
      field<bool>(
          "dataset.symmetrize", [](C & c) -> auto& { return c.dataset.transform.symmetrize; }),
      field<bool>(
          "dataset.self_loops", [](C & c) -> auto& { return c.dataset.transform.self_loops; }),
      field<bool>(
          "dataset.row_normalize",
          [](C & c) -> auto& { return c.dataset.transform.row_normalize; }),
      field<int64_t>(
          "dataset.synthetic.num_nodes",
          [](C & c) -> auto& { return c.dataset.synthetic.num_nodes; }),
      field<int64_t>(
          "dataset.synthetic.num_classes",
          [](C & c) -> auto& { return c.dataset.synthetic.num_classes; }),
      field<int64_t>(
          "dataset.synthetic.feat_dim",
          [](C & c) -> auto& { return c.dataset.synthetic.feat_dim; }),
      field<double>(
          "dataset.synthetic.avg_degree",
          [](C & c) -> auto& { return c.dataset.synthetic.avg_degree; }),
      field<double>(
          "dataset.synthetic.homophily",
          [](C & c) -> auto& { return c.dataset.synthetic.homophily; }),
      field<bool>(
          "dataset.synthetic.heavy_tailed",
          [](C & c) -> auto& { return c.dataset.synthetic.heavy_tailed; }),
      field<double>(
          "dataset.synthetic.power_law_exponent",
          [](C & c) -> auto& { return c.dataset.synthetic.power_law_exponent; }),
      field<double>(
          "dataset.synthetic.feature_signal",
          [](C & c) -> auto& { return c.dataset.synthetic.feature_signal; }),
      field<double>(
          "dataset.synthetic.train_fraction",
          [](C & c) -> auto& { return c.dataset.synthetic.train_fraction; }),
      field<double>(
          "dataset.synthetic.valid_fraction",
          [](C & c) -> auto& { return c.dataset.synthetic.valid_fraction; }),
      field<uint64_t>(
          "dataset.synthetic.seed", [](C & c) -> auto& { return c.dataset.synthetic.seed; }),
      field<bool>(
          "dataset.synthetic.heterogeneous",
          [](C & c) -> auto& { return c.dataset.synthetic.heterogeneous; }),
      choice_field<PartitionMethod>(
          "partition.method", [](C & c) -> auto& { return c.partition.options.method; },
          parse_partition_method, to_string),
      field<int>(
          "partition.parts", [](C & c) -> auto& { return c.partition.options.parts; }),
      field<uint64_t>(
          "partition.seed", [](C & c) -> auto& { return c.partition.options.seed; }),
      field<bool>(
          "partition.balance_train",
          [](C & c) -> auto& { return c.partition.options.balance_train; }),
      field<bool>(
          "partition.balance_edges",
          [](C & c) -> auto& { return c.partition.options.balance_edges; }),
      field<bool>(
          "partition.balance_types",
          [](C & c) -> auto& { return c.partition.options.balance_types; }),
      field<int64_t>(
          "partition.sample_degree",
          [](C & c) -> auto& { return c.partition.options.sample_degree; }),
      field<std::string>(
          "partition.dir", [](C & c) -> auto& { return c.partition.dir; }),
      choice_field<PartDistribution>(
          "partition.distribute", [](C & c) -> auto& { return c.partition.distribute; },
          parse_part_distribution, to_string),
      field<std::string>(
          "partition.local_dir", [](C & c) -> auto& { return c.partition.local_dir; }),
      choice_field<ModelType>(
          "model.type", [](C & c) -> auto& { return c.model.type; }, parse_model_type, to_string),
      field<int>(
          "model.layers", [](C & c) -> auto& { return c.model.layers; }),
      field<int>(
          "model.hidden", [](C & c) -> auto& { return c.model.hidden; }),
      field<double>(
          "model.dropout", [](C & c) -> auto& { return c.model.dropout; }),
      field<bool>(
          "model.layer_norm", [](C & c) -> auto& { return c.model.layer_norm; }),
      field<int>(
          "model.heads", [](C & c) -> auto& { return c.model.heads; }),
      field<double>(
          "model.attention_dropout", [](C & c) -> auto& { return c.model.attention_dropout; }),
      field<int>(
          "model.num_bases", [](C & c) -> auto& { return c.model.num_bases; }),
      choice_field<FeaturelessInput>(
          "model.featureless", [](C & c) -> auto& { return c.model.featureless; },
          parse_featureless_input, to_string),
      field<int>(
          "training.epochs", [](C & c) -> auto& { return c.training.epochs; }),
      field<double>(
          "training.lr", [](C & c) -> auto& { return c.training.lr; }),
      field<double>(
          "training.weight_decay", [](C & c) -> auto& { return c.training.weight_decay; }),
      field<uint64_t>(
          "training.seed", [](C & c) -> auto& { return c.training.seed; }),
      field<int>(
          "training.eval_every", [](C & c) -> auto& { return c.training.eval_every; }),
      field<int>(
          "training.patience", [](C & c) -> auto& { return c.training.patience; }),
      field<bool>(
          "training.restore_best", [](C & c) -> auto& { return c.training.restore_best; }),
      choice_field<ScoreMetric>(
          "training.metric", [](C & c) -> auto& { return c.training.metric; }, parse_score_metric,
          to_string),
      field<int>(
          "training.threads", [](C & c) -> auto& { return c.training.threads; }),
      choice_field<DeviceChoice>(
          "training.device", [](C & c) -> auto& { return c.training.device; }, parse_device_choice,
          to_string),
      field<int>(
          "training.checkpoint_every", [](C & c) -> auto& { return c.training.checkpoint_every; }),
      field<std::string>(
          "training.checkpoint_dir", [](C & c) -> auto& { return c.training.checkpoint_dir; }),
      choice_field<Recompute>(
          "training.recompute", [](C & c) -> auto& { return c.training.recompute; },
          parse_recompute, to_string),
      choice_field<ComputePrecision>(
          "training.precision", [](C & c) -> auto& { return c.training.precision; },
          parse_precision, to_string),
      field<bool>(
          "training.sparse_features", [](C & c) -> auto& { return c.training.sparse_features; }),
      choice_field<Backend>(
          "communication.backend", [](C & c) -> auto& { return c.communication.backend; },
          parse_backend, to_string),
      choice_field<CommMode>(
          "communication.mode", [](C & c) -> auto& { return c.communication.mode; },
          parse_comm_mode, to_string),
      field<int>(
          "communication.bits", [](C & c) -> auto& { return c.communication.bits; }),
      choice_field<BitScheme>(
          "communication.scheme", [](C & c) -> auto& { return c.communication.scheme; },
          parse_bit_scheme, to_string),
      field<bool>(
          "communication.feature_cache",
          [](C & c) -> auto& { return c.communication.feature_cache; }),
      choice_field<ExchangeLayout>(
          "communication.exchange", [](C & c) -> auto& { return c.communication.exchange; },
          parse_exchange_layout, to_string),
      field<double>(
          "communication.timeout_s", [](C & c) -> auto& { return c.communication.timeout_s; }),
      int_list_field(
          "communication.bit_set", [](C & c) -> auto& { return c.communication.bit_set; }),
      field<double>(
          "communication.lambda", [](C & c) -> auto& { return c.communication.lambda; }),
      field<int>(
          "communication.group_size", [](C & c) -> auto& { return c.communication.group_size; }),
      field<int>(
          "communication.assign_period",
          [](C & c) -> auto& { return c.communication.assign_period; }),
      choice_field<assign::Solver>(
          "communication.solver", [](C & c) -> auto& { return c.communication.solver; },
          assign::parse_solver, assign::to_string),
      choice_field<assign::Objective>(
          "communication.objective", [](C & c) -> auto& { return c.communication.objective; },
          assign::parse_objective, assign::to_string),
      field<double>(
          "communication.resolve_drift",
          [](C & c) -> auto& { return c.communication.resolve_drift; }),
      choice_field<SolveSchedule>(
          "communication.solve_schedule",
          [](C & c) -> auto& { return c.communication.solve_schedule; }, parse_solve_schedule,
          to_string),
      field<std::string>(
          "output.dir", [](C & c) -> auto& { return c.output.dir; }),
      choice_field<LogLevel>(
          "output.log_level", [](C & c) -> auto& { return c.output.log_level; }, parse_log_level,
          to_string),
      field<int>(
          "output.progress_every", [](C & c) -> auto& { return c.output.progress_every; }),
      field<bool>(
          "output.predictions", [](C & c) -> auto& { return c.output.predictions; }),
  };
  return all;
}

const Field* find_field(const std::string& key) {
  for (const Field& f : fields())
    if (f.key == key) return &f;
  return nullptr;
}

bool is_section(const std::string& prefix) {
  for (const Field& f : fields())
    if (f.key.rfind(prefix + ".", 0) == 0) return true;
  return false;
}

// The keys directly under `section` ("" = top level), sections shown as "name.*".
std::string known_keys(const std::string& section) {
  const std::string prefix = section.empty() ? "" : section + ".";
  std::vector<std::string> names;
  for (const Field& f : fields()) {
    if (f.key.rfind(prefix, 0) != 0) continue;
    const size_t dot = f.key.find('.', prefix.size());
    const std::string name = dot == std::string::npos ? f.key : f.key.substr(0, dot) + ".*";
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

// Edits (insertions, deletions, substitutions, swaps of neighbours) from a to b.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The one key of another section whose own name is the name of `key` (training.features_from_edges:
// dataset.features_from_edges), or a typo away from it: 1 edit for names of 4-7 characters, 2 for
// 8-17, 3 beyond; none for shorter names, a few edits from too many others. Empty where none, or
// several at the least distance.
std::string key_of_another_section(const std::string& key) {
  const auto leaf = [](const std::string& k) { return k.substr(k.rfind('.') + 1); };
  const std::string name = leaf(key);
  size_t least = name.size() >= 18 ? 3 : name.size() >= 8 ? 2 : name.size() >= 4 ? 1 : 0;
  std::string best;
  bool unique = false;
  for (const Field& f : fields()) {
    const std::string other = leaf(f.key);
    const size_t longer = std::max(name.size(), other.size());
    if (longer - std::min(name.size(), other.size()) > least) continue;
    const size_t distance = edit_distance(name, other);
    if (distance < least || (best.empty() && distance == least)) {
      best = f.key;
      least = distance;
      unique = true;
    } else if (distance == least) {
      unique = false;
    }
  }
  return unique ? best : std::string();
}

// The key (`section`: the section) nearest to a mistyped `key`, where it is a typo away (at most 2
// edits, 3 for keys of 18 characters or more); else, for a key, key_of_another_section's; empty
// otherwise. A section `key` is in is no guess.
std::string nearest_key(const std::string& key, bool section) {
  std::string best;
  size_t best_distance = key.size() >= 18 ? 3 : 2;
  const auto consider = [&](const std::string& name) {
    const size_t longer = std::max(key.size(), name.size());
    if (longer - std::min(key.size(), name.size()) > best_distance) return;
    if (key.rfind(name + ".", 0) == 0) return;
    const size_t distance = edit_distance(key, name);
    if (distance <= best_distance && (best.empty() || distance < best_distance)) {
      best = name;
      best_distance = distance;
    }
  };
  for (const Field& f : fields()) {
    if (!section) consider(f.key);
    for (size_t dot = f.key.find('.'); section && dot != std::string::npos;
         dot = f.key.find('.', dot + 1))
      consider(f.key.substr(0, dot));
  }
  return best.empty() && !section ? key_of_another_section(key) : best;
}

// `holds_mapping`: the unknown key holds a mapping (a mistyped section), not a value.
[[noreturn]] void unknown_key(const std::string& origin, const std::string& key,
                              bool holds_mapping) {
  const size_t dot = key.rfind('.');
  std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
  while (!section.empty() && !is_section(section)) {
    const size_t d = section.rfind('.');
    section = d == std::string::npos ? "" : section.substr(0, d);
  }
  const std::string nearest = nearest_key(key, holds_mapping);
  throw ConfigError(fmt::format("{}: unknown key '{}'{} (known keys: {})", origin, key,
                                nearest.empty() ? "" : ", did you mean '" + nearest + "'?",
                                known_keys(section)));
}

// Sets the keys of `map` (under `prefix`); returns how many it set. `seen`: the dotted keys the
// file gave so far, in any mapping: YAML forbids a key twice in one mapping (yaml-cpp would keep
// the last silently), and a key may also be spelt dotted beside its section ("training.epochs: 3"
// and "training: {epochs: 7}").
int apply_map(JobConfig& cfg, const YAML::Node& map, const std::string& prefix,
              const std::string& origin, std::vector<std::string>& seen) {
  int set = 0;
  for (const auto& kv : map) {
    const std::string key = prefix + kv.first.as<std::string>();
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw ConfigError(fmt::format("{}: key '{}' is given twice", origin, key));
    seen.push_back(key);
    if (const Field* f = find_field(key)) {
      f->parse(cfg, kv.second, origin);
      ++set;
    } else if (is_section(key)) {
      if (kv.second.IsNull()) continue;
      if (!kv.second.IsMap())
        throw ConfigError(fmt::format("{}: key '{}' must be a mapping of keys ({}), got '{}'",
                                      origin, key, known_keys(key), scalar_text(kv.second)));
      set += apply_map(cfg, kv.second, key + ".", origin, seen);
    } else {
      unknown_key(origin, key, kv.second.IsMap());
    }
  }
  return set;
}

// An override of the job `job` (a file or the default job); its errors name both.
void apply_override(JobConfig& cfg, const std::string& text, const std::string& job) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(
        fmt::format("--set '{}': expected section.key=value (e.g. training.epochs=10)", text));
  const std::string key = text.substr(0, eq);
  const Field* f = find_field(key);
  if (f == nullptr && is_section(key)) {
    throw ConfigError(
        fmt::format("--set '{}': {} is a section; set one of its keys ({}), e.g. "
                    "--set {}.KEY=VALUE",
                    text, key, known_keys(key), key));
  }
  if (f == nullptr) unknown_key("--set", key, /*holds_mapping=*/false);
  const std::string raw = text.substr(eq + 1);
  // YAML folds the lines of a scalar, quoted or not, into one joined by spaces: a path with a
  // newline would silently name another path.
  if (raw.find('\n') != std::string::npos) {
    throw ConfigError(fmt::format(
        "--set {}: a value of several lines (YAML would join them with spaces); write a newline "
        "as \\n inside double quotes",
        key));
  }
  const YamlDocument doc = parse_yaml_document(raw);
  if (!doc.error.empty()) throw ConfigError(fmt::format("--set '{}': {}", text, doc.error));
  f->parse(cfg, doc.root, job + ": --set");
}

// Where the keys' values came from: the job file (or the default job), and the keys --set gave.
struct Origin {
  std::string file;
  std::vector<std::string> set_keys;

  std::string of(const std::string& key) const {
    const bool set = std::find(set_keys.begin(), set_keys.end(), key) != set_keys.end();
    return set ? file + ": --set" : file;
  }
};

void require(bool ok, const Origin& origin, const std::string& key, const std::string& value,
             const std::string& rule) {
  if (!ok) throw ConfigError(fmt::format("{}: {} = {}: {}", origin.of(key), key, value, rule));
}

// Keys that only the uniform scheme, or only the adaptive one, reads: a value other than the
// default under another scheme or a full-precision mode would be silently ignored, so it is an
// error naming the key and the keys that make it ineffective.
void require_effective(const JobConfig& c, const Origin& origin) {
  require(
      c.training.precision == ComputePrecision::kFp32 || c.training.device != DeviceChoice::kCpu,
      origin, "training.precision", to_string(c.training.precision),
      "has no effect with training.device = cpu: TF32 is a mode of the GPU's tensor cores");
  const PartitionOptions& p = c.partition.options;
  const std::string balance_rule = fmt::format(
      "has no effect with partition.method = {}: only metis balances it", to_string(p.method));
  require(!p.balance_train || p.method == PartitionMethod::kMetis, origin,
          "partition.balance_train", "true", balance_rule);
  require(!p.balance_edges || p.method == PartitionMethod::kMetis, origin,
          "partition.balance_edges", "true", balance_rule);
  require(!p.balance_types || p.method == PartitionMethod::kMetis, origin,
          "partition.balance_types", "true", balance_rule);
  // A dataset on disk shows whether it has node types once it is read (partition/assign_parts.cpp).
  require(!p.balance_types || !c.dataset.path.empty() || c.dataset.synthetic.heterogeneous, origin,
          "partition.balance_types", "true",
          "has no effect on the generated graph without dataset.synthetic.heterogeneous = true: "
          "it has no node types");
  const PartitionOptions part_defaults;
  require(p.seed == part_defaults.seed || p.method != PartitionMethod::kContiguous, origin,
          "partition.seed", std::to_string(p.seed),
          "has no effect with partition.method = contiguous: it splits the node ids in order");
  require(c.partition.local_dir.empty() || c.partition.distribute != PartDistribution::kShared,
          origin, "partition.local_dir", c.partition.local_dir,
          "has no effect with partition.distribute = shared: every rank reads its part from "
          "partition.dir, and none is cached");
  require(!c.model.layer_norm || c.model.layers > 1, origin, "model.layer_norm", "true",
          "has no effect with model.layers = 1: it normalises the hidden layers' outputs");
  require(c.training.recompute == Recompute::kNone || c.model.layers > 1, origin,
          "training.recompute", to_string(c.training.recompute),
          "has no effect with model.layers = 1: layer 0 keeps no aggregation to recompute");
  const CommunicationConfig& m = c.communication;
  const CommunicationConfig defaults;
  const std::string where = fmt::format(
      "has no effect with communication.mode = {} and "
      "communication.scheme = {}",
      to_string(m.mode), to_string(m.scheme));
  const bool quantized = quantizes(m.mode);
  require(m.scheme == defaults.scheme || quantized, origin, "communication.scheme",
          to_string(m.scheme),
          fmt::format("has no effect with communication.mode = {}: only a quantized mode (quant, "
                      "adaqp) chooses widths",
                      to_string(m.mode)));
  require(m.bits == defaults.bits || (quantized && m.scheme == BitScheme::kUniform), origin,
          "communication.bits", std::to_string(m.bits),
          where +
              ": one width for every message is communication.scheme=uniform in a quantized "
              "mode (quant, adaqp)");
  const bool adaptive = quantized && m.scheme == BitScheme::kAdaptive;
  const std::string solver_only = where + ": only the adaptive scheme of a quantized mode reads it";
  require(m.bit_set == defaults.bit_set || adaptive, origin, "communication.bit_set",
          fmt::format("[{}]", fmt::join(m.bit_set, ", ")), solver_only);
  require(m.lambda == defaults.lambda || adaptive, origin, "communication.lambda",
          print_value(m.lambda), solver_only);
  require(m.group_size == defaults.group_size || adaptive, origin, "communication.group_size",
          std::to_string(m.group_size), solver_only);
  require(m.assign_period == defaults.assign_period || adaptive, origin,
          "communication.assign_period", std::to_string(m.assign_period), solver_only);
  require(m.solver == defaults.solver || adaptive, origin, "communication.solver",
          assign::to_string(m.solver), solver_only);
  require(m.objective == defaults.objective || adaptive, origin, "communication.objective",
          assign::to_string(m.objective), solver_only);
  require(m.resolve_drift == defaults.resolve_drift || adaptive, origin,
          "communication.resolve_drift", print_value(m.resolve_drift), solver_only);
  require(m.solve_schedule == defaults.solve_schedule || adaptive, origin,
          "communication.solve_schedule", to_string(m.solve_schedule), solver_only);
}

void validate(const JobConfig& c, const Origin& origin) {
  const DatasetSpec& d = c.dataset;
  const bool reads_files =
      d.format != DatasetFormat::kSynthetic && d.format != DatasetFormat::kAuto;
  require(!reads_files || !d.path.empty(), origin, "dataset.path", "''",
          std::string("required by dataset.format = ") + to_string(d.format) +
              " (dataset.format auto without a path trains the generated graph)");
  require(d.format != DatasetFormat::kSynthetic || d.path.empty(), origin, "dataset.path",
          "'" + d.path + "'",
          "given with dataset.format = synthetic, which reads no files (dataset.format auto "
          "detects the directory's layout; drop dataset.path for the generator)");
  try {
    validate_generator_options(c.dataset.synthetic);
  } catch (const ConfigError& e) {
    // The generator's errors start with the key ("dataset.synthetic.K = V: ...").
    const std::string what = e.what();
    throw ConfigError(origin.of(what.substr(0, what.find(" = "))) + ": " + what);
  }
  const PartitionOptions& p = c.partition.options;
  require(p.parts >= 1, origin, "partition.parts", std::to_string(p.parts), "must be >= 1");
  require(p.sample_degree >= 0, origin, "partition.sample_degree", std::to_string(p.sample_degree),
          "must be >= 0 (0 = the whole graph)");
  require(p.sample_degree == 0 || p.method == PartitionMethod::kMetis ||
              p.method == PartitionMethod::kPtscotch,
          origin, "partition.sample_degree", std::to_string(p.sample_degree),
          std::string("applies to partition.method metis and ptscotch only (0 for ") +
              to_string(p.method) + ")");
  // The random streams key a layer by 8 bits (common/philox.h).
  require(c.model.layers >= 1 && c.model.layers <= 256, origin, "model.layers",
          std::to_string(c.model.layers), "must be in [1, 256]");
  require(c.model.hidden >= 1, origin, "model.hidden", std::to_string(c.model.hidden),
          "must be >= 1");
  require(c.model.dropout >= 0 && c.model.dropout < 1, origin, "model.dropout",
          print_value(c.model.dropout), "must be in [0, 1)");
  require(c.model.heads >= 1, origin, "model.heads", std::to_string(c.model.heads), "must be >= 1");
  const ModelTypeRules& rules = model_type_rules(c.model.type);
  const std::string attention_types =
      model_types_where([](const ModelTypeRules& r) { return r.attention; });
  require(
      c.model.heads == 1 || rules.attention, origin, "model.heads", std::to_string(c.model.heads),
      "applies to model.type " + attention_types + " only (1 for " + to_string(c.model.type) + ")");
  require(c.model.heads == 1 || c.model.layers >= 2, origin, "model.heads",
          std::to_string(c.model.heads),
          "applies to hidden layers, and model.layers 1 has none (the last layer has one head)");
  require(c.model.hidden % c.model.heads == 0, origin, "model.heads", std::to_string(c.model.heads),
          "must divide model.hidden (" + std::to_string(c.model.hidden) +
              "): a hidden layer's heads share its width");
  require(c.model.attention_dropout >= 0 && c.model.attention_dropout < 1, origin,
          "model.attention_dropout", print_value(c.model.attention_dropout), "must be in [0, 1)");
  require(
      c.model.attention_dropout == 0 || rules.attention, origin, "model.attention_dropout",
      print_value(c.model.attention_dropout),
      "applies to model.type " + attention_types + " only (0 for " + to_string(c.model.type) + ")");
  require(c.model.num_bases >= 0, origin, "model.num_bases", std::to_string(c.model.num_bases),
          "must be >= 0 (0: one weight per relation)");
  require(c.model.num_bases == 0 || rules.relational, origin, "model.num_bases",
          std::to_string(c.model.num_bases),
          "applies to model.type " +
              model_types_where([](const ModelTypeRules& r) { return r.relational; }) +
              " only (0 for " + to_string(c.model.type) + ")");
  const bool embedding = c.model.featureless == FeaturelessInput::kEmbedding;
  require(!embedding || rules.relational, origin, "model.featureless", "embedding",
          "applies to model.type " +
              model_types_where([](const ModelTypeRules& r) { return r.relational; }) +
              " only (zeros for " + to_string(c.model.type) +
              "), whose layer 0 reads its input "
              "rows every epoch");
  // The edge masks' counters hold 256 blocks of 4 heads and 2^24 epochs (common/philox.h).
  require(c.model.attention_dropout == 0 || c.model.heads <= 1024, origin, "model.heads",
          std::to_string(c.model.heads), "must be <= 1024 with model.attention_dropout");
  require(c.model.attention_dropout == 0 || c.training.epochs < (1 << 24), origin,
          "training.epochs", std::to_string(c.training.epochs),
          "must be < 16777216 with model.attention_dropout");
  require(rules.no_partial_sums == nullptr || c.communication.exchange != ExchangeLayout::kCover,
          origin, "communication.exchange", to_string(c.communication.exchange),
          std::string(rules.relational ? "must be auto, rows or relation_first"
                                       : "must be auto or rows") +
              " with model.type " + to_string(c.model.type) + ": " +
              (rules.no_partial_sums != nullptr ? rules.no_partial_sums : ""));
  require(rules.relational || c.communication.exchange != ExchangeLayout::kRelationFirst, origin,
          "communication.exchange", to_string(c.communication.exchange),
          "applies to model.type " +
              model_types_where([](const ModelTypeRules& r) { return r.relational; }) + " only (" +
              (rules.no_partial_sums != nullptr ? "auto or rows" : "auto, rows or cover") +
              " for " + to_string(c.model.type) + "): its rows are aggregated per relation");
  const TrainingConfig& t = c.training;
  require(t.epochs >= 1, origin, "training.epochs", std::to_string(t.epochs), "must be >= 1");
  // The optimizer holds them as float32.
  const double most = std::numeric_limits<float>::max();
  // Below float32's least normal number a step is 0 or a subnormal: nothing would train. Adam's
  // first step takes lr / (1 - beta1), 10 lr (libtorch's beta1 0.9), as a float32: above 3.4e37
  // that overflows in libtorch (an error per rank, not naming the key).
  const double least = std::numeric_limits<float>::min(), most_lr = 3.4e37;
  require(t.lr >= least && t.lr <= most_lr, origin, "training.lr", print_value(t.lr),
          "must be in [1.1755e-38, 3.4e37]: float32's normal numbers (a smaller rate is lost to "
          "float32), and Adam's first step, 10 times the rate, must be a float32 too");
  require(t.weight_decay >= 0 && t.weight_decay <= most, origin, "training.weight_decay",
          print_value(t.weight_decay), "must be >= 0 and at most float32's largest, 3.4028e38");
  require(t.eval_every >= 1, origin, "training.eval_every", std::to_string(t.eval_every),
          "must be >= 1");
  require(t.patience >= 0, origin, "training.patience", std::to_string(t.patience),
          "must be >= 0 (0 = no early stopping)");
  require(t.threads >= 0, origin, "training.threads", std::to_string(t.threads),
          "must be >= 0 (0 = automatic)");
  require(t.checkpoint_every >= 0, origin, "training.checkpoint_every",
          std::to_string(t.checkpoint_every), "must be >= 0 (0 = no checkpoints)");
  require(t.recompute == Recompute::kNone || rules.no_recompute == nullptr, origin,
          "training.recompute", to_string(t.recompute),
          "saves memory only with model.type " +
              model_types_where([](const ModelTypeRules& r) { return r.no_recompute == nullptr; }) +
              " (model.type is " + to_string(c.model.type) + ": " +
              (rules.no_recompute != nullptr ? rules.no_recompute : "") + ")");
  const CommunicationConfig& m = c.communication;
  require(quant::valid_bits(m.bits), origin, "communication.bits", std::to_string(m.bits),
          "must be " + quant::width_list());
  require(m.timeout_s >= 1 && m.timeout_s <= 1e6, origin, "communication.timeout_s",
          print_value(m.timeout_s),
          "must be in [1, 1e6] seconds (a shorter bound would stop a healthy job: its start-up "
          "steps alone wait that long)");
  const std::string bit_set = fmt::format("[{}]", fmt::join(m.bit_set, ", "));
  require(!m.bit_set.empty(), origin, "communication.bit_set", bit_set, "must not be empty");
  for (int b : m.bit_set) {
    require(quant::valid_bits(b) && std::count(m.bit_set.begin(), m.bit_set.end(), b) == 1, origin,
            "communication.bit_set", bit_set,
            "entries must be " + quant::width_list() + ", each at most once");
  }
  require(m.lambda >= 0 && m.lambda <= 1, origin, "communication.lambda", print_value(m.lambda),
          "must be in [0, 1]");
  require(m.group_size >= 1, origin, "communication.group_size", std::to_string(m.group_size),
          "must be >= 1");
  require(m.assign_period >= 1, origin, "communication.assign_period",
          std::to_string(m.assign_period), "must be >= 1");
  require(m.resolve_drift >= 0 && m.resolve_drift <= 1e6, origin, "communication.resolve_drift",
          print_value(m.resolve_drift), "must be in [0, 1e6]");
  require(!c.output.dir.empty(), origin, "output.dir", "''", "must not be empty");
  require(c.output.progress_every >= 0, origin, "output.progress_every",
          std::to_string(c.output.progress_every), "must be >= 0 (0 = automatic)");
  require_effective(c, origin);
}

}  // namespace

JobConfig load_job_config(const std::string& path, const std::vector<std::string>& overrides) {
  JobConfig cfg;
  const std::string origin = path.empty() ? "<default job>" : path;
  if (!path.empty()) {
    if (!std::filesystem::is_regular_file(path)) {
      std::error_code ec;
      throw ConfigError(
          fmt::format("{}: job configuration file {}", path,
                      std::filesystem::exists(path, ec) ? "is not a regular file" : "not found"));
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in || in.bad())
      throw ConfigError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
    // A second document would be ignored: its keys would silently have no effect.
    const YamlDocument doc = parse_yaml_document(text.str());
    if (!doc.error.empty()) throw ConfigError(fmt::format("{}: {}", path, doc.error));
    const YAML::Node& root = doc.root;
    if (!root.IsNull() && !root.IsMap())
      throw ConfigError(
          fmt::format("{}: expected a mapping of sections ({})", path, known_keys("")));
    int set = 0;
    try {
      std::vector<std::string> seen;
      if (root.IsMap()) set = apply_map(cfg, root, "", origin, seen);
    } catch (const YAML::Exception& e) {
      throw ConfigError(fmt::format("{}: unreadable key: {}", path, e.what()));
    }
    // A file that sets nothing (empty, only comments, a truncated copy's bare "dataset:") would
    // silently run the default job.
    if (set == 0) {
      throw ConfigError(fmt::format(
          "{}: holds no keys (the default job runs without --config; configs/default.yaml "
          "lists every key)",
          path));
    }
  }
  Origin origins{origin, {}};
  for (const std::string& o : overrides) {
    apply_override(cfg, o, origin);
    origins.set_keys.push_back(o.substr(0, o.find('=')));
  }
  validate(cfg, origins);
  cfg.partition.options.dataset_keys = dataset_identity(cfg);
  const JobConfig defaults;
  for (const auto& kv : cfg.partition.options.dataset_keys) {
    cfg.partition.options.dataset_key_defaults.emplace_back(kv.first,
                                                            find_field(kv.first)->print(defaults));
  }
  return cfg;
}

std::vector<std::pair<std::string, std::string>> dataset_identity(const JobConfig& cfg) {
  const bool generated = cfg.dataset.path.empty();
  std::vector<std::pair<std::string, std::string>> keys;
  for (const Field& f : fields()) {
    if (f.key.rfind("dataset.", 0) != 0 || !f.print) continue;
    if (!generated && f.key.rfind("dataset.synthetic.", 0) == 0) continue;
    // The data, not how it is named: a path's layout fixes its format (auto finds that one, any
    // other fails to load), and no path means the generator.
    if (f.key == "dataset.format") continue;
    std::string value = f.print(cfg);
    if (f.key == "dataset.path" && !generated) {
      value = directory_path(std::filesystem::absolute(cfg.dataset.path)).string();
    }
    keys.emplace_back(f.key, value);
  }
  return keys;
}

std::string to_yaml(const JobConfig& cfg) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  std::vector<std::string> open;  // the sections currently open
  for (const Field& f : fields()) {
    std::vector<std::string> parts;
    for (size_t start = 0;;) {
      const size_t dot = f.key.find('.', start);
      parts.push_back(f.key.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    const std::vector<std::string> sections(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < open.size() && common < sections.size() && open[common] == sections[common])
      ++common;
    for (size_t i = open.size(); i > common; --i) out << YAML::EndMap;
    open.resize(common);
    for (size_t i = common; i < sections.size(); ++i) {
      out << YAML::Key << sections[i] << YAML::Value << YAML::BeginMap;
      open.push_back(sections[i]);
    }
    out << YAML::Key << parts.back() << YAML::Value;
    if (f.emit) {
      f.emit(cfg, out);
    } else {
      out << f.print(cfg);
    }
  }
  for (size_t i = 0; i < open.size(); ++i) out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::pair<std::string, std::string>> key_values(const JobConfig& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Field& f : fields()) {
    if (f.print) {
      out.emplace_back(f.key, f.print(cfg));
    } else {
      YAML::Emitter e;
      e << YAML::Flow;
      f.emit(cfg, e);
      out.emplace_back(f.key, e.c_str());
    }
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> changed_key_values(const JobConfig& cfg) {
  const auto defaults = key_values(JobConfig{});
  auto keys = key_values(cfg);
  std::vector<std::pair<std::string, std::string>> changed;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i].second != defaults[i].second) changed.push_back(std::move(keys[i]));
  return changed;
}

void require_recompute_effect(const JobConfig& cfg, int64_t num_classes) {
  const ModelConfig& m = cfg.model;
  if (cfg.training.recompute == Recompute::kNone ||
      model_type_rules(m.type).no_recompute != nullptr)
    return;
  // A layer after the first recomputes its aggregation when it aggregates first, i.e. does not
  // narrow its rows (out >= in): the hidden layers of a model of 3 or more layers, and the last
  // one when there are at least as many classes as hidden units.
  if (m.layers >= 3 || num_classes >= m.hidden) return;
  throw ConfigError(fmt::format(
      "training.recompute = {} has no effect with model.type = {}, model.layers = {} and "
      "model.hidden = {} on a dataset of {} classes: only a layer after the first that does not "
      "narrow its rows (out >= in) recomputes its aggregation; set training.recompute = none",
      to_string(cfg.training.recompute), to_string(m.type), m.layers, m.hidden, num_classes));
}

void require_metric_fits(const JobConfig& cfg, bool multilabel) {
  resolve_score_metric(cfg.training.metric, multilabel);
}

void require_relations(const JobConfig& cfg, size_t num_relations) {
  if (num_relations > 0 || !model_type_rules(cfg.model.type).relational) return;
  throw ConfigError(fmt::format(
      "model.type = {} aggregates each relation on its own, and the dataset has no node types and "
      "relations: use a heterogeneous dataset (docs/data-formats.md) or another model.type",
      to_string(cfg.model.type)));
}

std::string partition_dir(const JobConfig& cfg) {
  if (!cfg.partition.dir.empty()) return cfg.partition.dir;
  return (std::filesystem::path(cfg.output.dir) / "partition").string();
}

std::string part_cache_dir(const JobConfig& cfg) {
  if (!cfg.partition.local_dir.empty()) return cfg.partition.local_dir;
  std::error_code ec;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  return ((ec ? std::filesystem::path("/tmp") : tmp) / "adaqp-parts").string();
}

std::string checkpoint_dir(const JobConfig& cfg) {
  if (!cfg.training.checkpoint_dir.empty()) return cfg.training.checkpoint_dir;
  return (std::filesystem::path(cfg.output.dir) / "checkpoints").string();
}

}  // namespace adaqp
