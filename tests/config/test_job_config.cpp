#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/config/job_config.h"
#include "test_util.h"

namespace adaqp {
namespace {

std::string write_config(const test::TempDir& dir, const std::string& text) {
  const std::string path = dir.str("job.yaml");
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

// A job file with one key at its default: the default job, read from a file.
constexpr const char* kDefaultJob = "output: {log_level: info}\n";

// The ConfigError message of loading `text` with `overrides` ("" if it loads).
std::string config_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  test::TempDir dir;
  try {
    load_job_config(write_config(dir, text), overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// The dotted paths of a YAML mapping's leaves, in document order ("dataset.synthetic.seed").
void collect_key_paths(const YAML::Node& node, const std::string& prefix,
                       std::vector<std::string>& out) {
  for (const auto& kv : node) {
    const std::string key = prefix + kv.first.as<std::string>();
    if (kv.second.IsMap()) {
      collect_key_paths(kv.second, key + ".", out);
    } else {
      out.push_back(key);
    }
  }
}

std::vector<std::string> yaml_key_paths(const YAML::Node& root) {
  std::vector<std::string> out;
  collect_key_paths(root, "", out);
  return out;
}

TEST(JobConfig, DefaultsAreTheEmbeddedJob) {
  const JobConfig c = load_job_config("");
  EXPECT_STREQ(to_string(c.dataset.format), "auto");  // no path: the generated graph
  EXPECT_EQ(c.dataset.path, "");
  EXPECT_EQ(c.dataset.synthetic.num_nodes, 10000);
  EXPECT_EQ(c.dataset.synthetic.num_classes, 8);
  EXPECT_EQ(c.dataset.synthetic.feat_dim, 64);
  EXPECT_EQ(c.dataset.synthetic.avg_degree, 10.0);
  EXPECT_EQ(c.dataset.synthetic.homophily, 0.8);
  EXPECT_TRUE(c.dataset.transform.self_loops);
  EXPECT_STREQ(to_string(c.partition.options.method), "metis");
  EXPECT_EQ(c.partition.options.parts, 2);
  EXPECT_STREQ(to_string(c.model.type), "gcn");
  EXPECT_EQ(c.model.layers, 3);
  EXPECT_EQ(c.model.hidden, 64);
  EXPECT_EQ(c.training.epochs, 200);
  EXPECT_STREQ(to_string(c.communication.mode),
               "adaqp");  // the method: quantized, overlapped, adaptive
  EXPECT_STREQ(to_string(c.communication.scheme), "adaptive");
  EXPECT_STREQ(to_string(c.training.device), "auto");
  EXPECT_STREQ(to_string(c.communication.backend), "auto");
  EXPECT_EQ(partition_dir(c), "runs/default/partition");
  EXPECT_EQ(c.training.checkpoint_every, 0);
  EXPECT_EQ(checkpoint_dir(c), "runs/default/checkpoints");
}

TEST(JobConfig, ChangedKeyValuesAreTheKeysSetToOtherThanTheirDefaults) {
  EXPECT_TRUE(changed_key_values(load_job_config("")).empty());
  // A key set to its default is not a change; the order is to_yaml's, not the overrides'.
  const JobConfig c = load_job_config("", {"training.lr=0.05", "model.type=sage", "model.hidden=64",
                                           "communication.bit_set=[2, 8]"});
  using KV = std::pair<std::string, std::string>;
  EXPECT_THAT(changed_key_values(c),
              ::testing::ElementsAre(KV{"model.type", "sage"}, KV{"training.lr", "0.05"},
                                     KV{"communication.bit_set", "[2, 8]"}));
}

TEST(JobConfig, ShippedConfigsLoadAndDefaultYamlIsTheEmbeddedJob) {
  const char* src = std::getenv("ADAQP_SOURCE_DIR");
  if (src == nullptr) {
    if (test::running_in_ci()) FAIL() << "ADAQP_SOURCE_DIR not set (run through ctest)";
    GTEST_SKIP() << "ADAQP_SOURCE_DIR not set (run through ctest)";
  }
  const std::string configs = std::string(src) + "/configs/";
  EXPECT_EQ(to_yaml(load_job_config(configs + "default.yaml")), to_yaml(load_job_config("")));
  // ... and spells out every key (equal configurations alone would let a key be left out).
  const std::vector<std::string> listed = yaml_key_paths(YAML::LoadFile(configs + "default.yaml"));
  const std::vector<std::string> all = yaml_key_paths(YAML::Load(to_yaml(load_job_config(""))));
  EXPECT_EQ(listed, all);
  for (const char* name : {"cora", "citeseer", "amazon-photo", "coauthor-physics"}) {
    const JobConfig c = load_job_config(configs + name + ".yaml");
    EXPECT_STREQ(to_string(c.dataset.format), "ogb") << name;
    EXPECT_EQ(c.dataset.path, std::string("../shared/datasets/") + name);
    // Amazon Photo: raw binary features and 64 hidden units (configs/amazon-photo.yaml says why).
    const bool amazon = std::string(name) == "amazon-photo";
    EXPECT_TRUE(c.dataset.transform.symmetrize && c.dataset.transform.self_loops) << name;
    EXPECT_EQ(c.dataset.transform.row_normalize, !amazon) << name;
    EXPECT_EQ(c.model.hidden, amazon ? 64 : 16) << name;
    EXPECT_EQ(c.model.dropout, 0.5) << name;
    EXPECT_EQ(c.training.lr, 0.01) << name;
    EXPECT_EQ(c.training.weight_decay, 5e-4) << name;
    EXPECT_EQ(c.training.epochs, 200) << name;
  }
}

TEST(JobConfig, ParsesEverySection) {
  const std::string text = R"(
dataset:
  format: numpy
  path: data/x
  row_normalize: true
  synthetic: {num_nodes: 500, heavy_tailed: true, seed: 9}
partition: {method: metis, parts: 3, seed: 4, balance_train: true, dir: parts/x}
model: {type: sage, layers: 3, hidden: 256, dropout: 0.25, layer_norm: true}
training: {epochs: 5, lr: 0.005, weight_decay: 0, seed: 3, eval_every: 2, patience: 7,
           restore_best: true, threads: 4, checkpoint_every: 10, checkpoint_dir: ckpt/x,
           recompute: aggregations}
communication: {backend: nccl, mode: adaqp, bits: 8, scheme: adaptive, feature_cache: false, timeout_s: 30,
                bit_set: [8, 2], lambda: 0.25, group_size: 100, assign_period: 50, solver: exact}
output: {dir: out/x, log_level: debug}
)";
  test::TempDir dir;
  const JobConfig c = load_job_config(write_config(dir, text));
  EXPECT_STREQ(to_string(c.dataset.format), "numpy");
  EXPECT_EQ(c.dataset.path, "data/x");
  EXPECT_TRUE(c.dataset.transform.row_normalize);
  EXPECT_TRUE(c.dataset.transform.self_loops);  // untouched default
  EXPECT_EQ(c.dataset.synthetic.num_nodes, 500);
  EXPECT_TRUE(c.dataset.synthetic.heavy_tailed);
  EXPECT_EQ(c.dataset.synthetic.seed, 9u);
  EXPECT_STREQ(to_string(c.partition.options.method), "metis");
  EXPECT_EQ(c.partition.options.parts, 3);
  EXPECT_EQ(c.partition.options.seed, 4u);
  EXPECT_TRUE(c.partition.options.balance_train);
  EXPECT_EQ(partition_dir(c), "parts/x");
  EXPECT_STREQ(to_string(c.model.type), "sage");
  EXPECT_EQ(c.model.layers, 3);
  EXPECT_EQ(c.model.hidden, 256);
  EXPECT_EQ(c.model.dropout, 0.25);
  EXPECT_TRUE(c.model.layer_norm);
  EXPECT_EQ(c.training.epochs, 5);
  EXPECT_EQ(c.training.lr, 0.005);
  EXPECT_EQ(c.training.weight_decay, 0.0);
  EXPECT_EQ(c.training.eval_every, 2);
  EXPECT_EQ(c.training.patience, 7);
  EXPECT_TRUE(c.training.restore_best);
  EXPECT_EQ(c.training.threads, 4);
  EXPECT_EQ(c.training.checkpoint_every, 10);
  EXPECT_STREQ(to_string(c.training.recompute), "aggregations");
  EXPECT_EQ(checkpoint_dir(c), "ckpt/x");
  EXPECT_STREQ(to_string(c.communication.backend), "nccl");
  EXPECT_STREQ(to_string(c.communication.mode), "adaqp");
  EXPECT_EQ(c.communication.bits, 8);
  EXPECT_STREQ(to_string(c.communication.scheme), "adaptive");
  EXPECT_FALSE(c.communication.feature_cache);
  EXPECT_EQ(c.communication.timeout_s, 30.0);
  EXPECT_EQ(c.communication.bit_set, (std::vector<int>{8, 2}));
  EXPECT_EQ(c.communication.lambda, 0.25);
  EXPECT_EQ(c.communication.group_size, 100);
  EXPECT_EQ(c.communication.assign_period, 50);
  EXPECT_STREQ(assign::to_string(c.communication.solver), "exact");
  EXPECT_EQ(c.output.dir, "out/x");
  EXPECT_STREQ(to_string(c.output.log_level), "debug");
}

// A key only one scheme reads, set away from its default under another scheme or a full-precision
// mode, would be silently ignored: an error naming it and the keys that make it ineffective.
TEST(JobConfig, KeysWithoutEffectAreRefusedNamingBothKeys) {
  const JobConfig uniform =
      load_job_config("", {"communication.scheme=uniform", "communication.bits=4"});
  EXPECT_EQ(uniform.communication.bits, 4);
  EXPECT_TRUE(
      load_job_config("", {"dataset.synthetic.heterogeneous=true", "partition.balance_types=true"})
          .partition.options.balance_types);
  const JobConfig solver = load_job_config("", {"communication.lambda=0.25"});
  EXPECT_EQ(solver.communication.lambda, 0.25);
  EXPECT_EQ(load_job_config("", {}).training.precision, ComputePrecision::kFp32);
  // The same keys where their settings read them.
  EXPECT_EQ(
      load_job_config("", {"partition.method=random", "partition.seed=7"}).partition.options.seed,
      7u);
  EXPECT_EQ(load_job_config("", {"partition.distribute=scatter", "partition.local_dir=/tmp/c"})
                .partition.local_dir,
            "/tmp/c");
  EXPECT_TRUE(load_job_config("", {"model.layers=2", "model.layer_norm=true"}).model.layer_norm);
  EXPECT_EQ(load_job_config("", {"dataset.synthetic.heavy_tailed=true",
                                 "dataset.synthetic.power_law_exponent=3"})
                .dataset.synthetic.power_law_exponent,
            3.0);
  for (const char* device : {"training.device=cuda", "training.device=auto"}) {
    EXPECT_EQ(load_job_config("", {device, "training.precision=tf32"}).training.precision,
              ComputePrecision::kTf32);
  }
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"communication.bits=2"},
       {"communication.bits = 2: has no effect with communication.mode = adaqp and "
        "communication.scheme = adaptive",
        "communication.scheme=uniform"}},
      {{"communication.mode=vanilla", "communication.bits=4"},
       {"communication.bits = 4", "communication.mode = vanilla"}},
      {{"communication.mode=vanilla", "communication.scheme=uniform"},
       {"communication.scheme = uniform: has no effect with communication.mode = vanilla"}},
      {{"communication.mode=overlap", "communication.scheme=random"},
       {"communication.scheme = random: has no effect with communication.mode = overlap"}},
      {{"communication.scheme=random", "communication.lambda=0.9"},
       {"communication.lambda = 0.9", "communication.scheme = random", "adaptive scheme"}},
      {{"communication.mode=overlap", "communication.bit_set=[2, 4]"},
       {"communication.bit_set = [2, 4]", "communication.mode = overlap"}},
      {{"communication.scheme=uniform", "communication.group_size=8"},
       {"communication.group_size = 8"}},
      {{"communication.scheme=uniform", "communication.assign_period=5"},
       {"communication.assign_period = 5"}},
      {{"communication.scheme=uniform", "communication.solver=exact"},
       {"communication.solver = exact"}},
      {{"training.device=cpu", "training.precision=tf32"},
       {"training.precision = tf32: has no effect with training.device = cpu"}},
      {{"communication.scheme=uniform", "communication.objective=normalized"},
       {"communication.objective = normalized"}},
      {{"communication.mode=overlap", "communication.resolve_drift=0"},
       {"communication.resolve_drift = 0"}},
      {{"communication.mode=quant", "communication.scheme=uniform",
        "communication.solve_schedule=background"},
       {"communication.solve_schedule = background"}},
      {{"communication.solve_schedule=later"},
       {"communication.solve_schedule", "later", "auto, inline, background"}},
      {{"partition.method=random", "partition.balance_train=true"},
       {"partition.balance_train = true: has no effect with partition.method = random"}},
      {{"partition.method=contiguous", "partition.balance_edges=true"},
       {"partition.balance_edges = true: has no effect with partition.method = contiguous"}},
      {{"partition.method=ptscotch", "partition.balance_train=true"},
       {"partition.balance_train = true: has no effect with partition.method = ptscotch"}},
      {{"partition.method=random", "partition.balance_types=true"},
       {"partition.balance_types = true: has no effect with partition.method = random"}},
      {{"partition.balance_types=true"},
       {"partition.balance_types = true: has no effect on the generated graph without "
        "dataset.synthetic.heterogeneous = true"}},
      {{"model.type=sage", "model.layers=1", "training.recompute=aggregations"},
       {"training.recompute = aggregations: has no effect with model.layers = 1"}},
      {{"partition.method=contiguous", "partition.seed=7"},
       {"partition.seed = 7: has no effect with partition.method = contiguous"}},
      {{"partition.distribute=shared", "partition.local_dir=/tmp/cache"},
       {"partition.local_dir = /tmp/cache: has no effect with partition.distribute = shared"}},
      {{"model.layers=1", "model.layer_norm=true"},
       {"model.layer_norm = true: has no effect with model.layers = 1"}},
      {{"dataset.synthetic.power_law_exponent=3"},
       {"dataset.synthetic.power_law_exponent = 3: has no effect without heavy_tailed = true"}},
  };
  for (const auto& [overrides, expected] : cases) {
    std::string msg;
    try {
      load_job_config("", overrides);
    } catch (const ConfigError& e) {
      msg = e.what();
    }
    for (const std::string& part : expected) {
      EXPECT_TRUE(test::contains(msg, part)) << overrides.back() << " gave: '" << msg << "'";
    }
  }
}

// training.recompute recomputes the aggregation of a GraphSAGE layer after the first that does
// not narrow its rows: a 2-layer model has one only when the classes are at least the hidden units.
TEST(JobConfig, RecomputeWithoutALayerToRecomputeIsRefusedOnceTheClassesAreKnown) {
  const JobConfig two = load_job_config("", {"model.type=sage", "model.layers=2", "model.hidden=16",
                                             "training.recompute=aggregations"});
  const std::string msg = test::error_of<ConfigError>([&] { require_recompute_effect(two, 7); });
  EXPECT_TRUE(test::contains(msg,
                             "training.recompute = aggregations has no effect with "
                             "model.type = sage, model.layers = 2 and model.hidden = 16 "
                             "on a dataset of 7 classes"))
      << msg;
  EXPECT_NO_THROW(require_recompute_effect(two, 16));
  const JobConfig three =
      load_job_config("", {"model.type=sage", "model.layers=3", "training.recompute=aggregations"});
  EXPECT_NO_THROW(require_recompute_effect(three, 2));
  EXPECT_NO_THROW(require_recompute_effect(load_job_config("", {}), 2));
}

TEST(JobConfig, UnknownKeysAreNamedWithTheKnownOnes) {
  const std::string msg = config_error("communication:\n  bitz: 4\n");
  EXPECT_TRUE(test::contains(msg,
                             "job.yaml: unknown key 'communication.bitz', did you mean "
                             "'communication.bits'? (known keys: communication.backend, "
                             "communication.mode, communication.bits"))
      << msg;
  // A typo away from a key or a section (a swap of neighbours is one edit); farther, no guess.
  EXPECT_TRUE(test::contains(config_error("modle: {}\n"),
                             "unknown key 'modle', did you mean 'model'? (known keys: dataset.*"));
  EXPECT_TRUE(test::contains(config_error("training: {epoch: 3}\n"),
                             "unknown key 'training.epoch', did you mean 'training.epochs'?"));
  EXPECT_TRUE(test::contains(config_error("dataset: {synthetic: {nodes: 5}}\n"),
                             "unknown key 'dataset.synthetic.nodes' (known keys: "
                             "dataset.synthetic.num_nodes"));
  EXPECT_TRUE(test::contains(config_error("training: {rate: 3}\n"),
                             "unknown key 'training.rate' (known keys: "));
  // Not the section the key is in, nor a section for a value (or a key for a section).
  EXPECT_TRUE(test::contains(config_error("model: {t: gcn}\n"), "unknown key 'model.t' (known"));
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"trainin=5"}),
                             "unknown key 'trainin' (known keys: "));
  EXPECT_TRUE(test::contains(config_error("trainin: {epochs: 3}\n"),
                             "unknown key 'trainin', did you mean 'training'?"));
  EXPECT_TRUE(test::contains(config_error("model: 3\n"), "key 'model' must be a mapping"));
  // A key in the wrong section: the one key of its name, or a typo away, in another.
  EXPECT_TRUE(test::contains(config_error("training: {features_from_edges: mean}\n"),
                             "unknown key 'training.features_from_edges', did you mean "
                             "'dataset.features_from_edges'?"));
  EXPECT_TRUE(test::contains(config_error("dataset: {metric: auto}\n"),
                             "unknown key 'dataset.metric', did you mean 'training.metric'?"));
  EXPECT_TRUE(test::contains(config_error("training: {feature_from_edges: sum}\n"),
                             "did you mean 'dataset.features_from_edges'?"));
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"epochs=5"}),
                             "unknown key 'epochs', did you mean 'training.epochs'?"));
}

TEST(JobConfig, WrongTypesNameKeyAndValue) {
  EXPECT_TRUE(test::contains(config_error("model: {layers: two}\n"),
                             "key 'model.layers' expects an integer, got 'two'"));
  EXPECT_TRUE(
      test::contains(config_error("model: {hidden: 1.5}\n"), "'model.hidden' expects an integer"));
  EXPECT_TRUE(test::contains(config_error("training: {lr: fast}\n"),
                             "key 'training.lr' expects a number, got 'fast'"));
  EXPECT_TRUE(test::contains(config_error("training: {lr: 0.01.}\n"),
                             "key 'training.lr' expects a number, got '0.01.'"));
  EXPECT_TRUE(test::contains(config_error("training: {lr: 0x1p-4}\n"),
                             "key 'training.lr' expects a number, got '0x1p-4'"));
  for (const char* value : {".inf", "-.Inf", "nan", "1e999", "-1e400"}) {
    EXPECT_TRUE(
        test::contains(config_error(fmt::format("training: {{lr: {}}}\n", value)),
                       fmt::format("'training.lr' expects a finite number, got '{}'", value)))
        << value;
  }
  // An underflow is a number (strtod reports it as a range error too).
  test::TempDir dir;
  const double tiny = load_job_config(write_config(dir, "training: {weight_decay: 1e-310}\n"))
                          .training.weight_decay;
  EXPECT_GT(tiny, 0.0);
  EXPECT_LT(tiny, 1e-309);
  EXPECT_EQ(load_job_config(write_config(dir, "training: {weight_decay: 1e-400}\n"))
                .training.weight_decay,
            0.0);
  EXPECT_TRUE(test::contains(config_error("model: {layer_norm: 1}\n"),
                             "key 'model.layer_norm' expects true or false, got '1'"));
  EXPECT_TRUE(test::contains(config_error("training: {seed: -1}\n"),
                             "'training.seed' expects a non-negative integer, got '-1'"));
  EXPECT_TRUE(test::contains(config_error("model: {type: [gcn]}\n"),
                             "'model.type' expects a string, got '<[gcn]>' (YAML reads it as a "
                             "list: quote the value to give a string)"));
  EXPECT_TRUE(test::contains(config_error("dataset:\n  path: {a: b}\n"),
                             "(YAML reads it as a mapping: quote the value to give a string)"));
  EXPECT_TRUE(
      test::contains(config_error("communication: {bit_set: 8}\n"),
                     "key 'communication.bit_set' expects a list of integers, e.g. [2, 4, 8], "
                     "got '8'"));
  EXPECT_TRUE(test::contains(config_error("communication: {bit_set: [2, x]}\n"),
                             "key 'communication.bit_set' expects an integer, got 'x'"));
  EXPECT_TRUE(
      test::contains(config_error("partition: {parts: 99999999999}\n"), "'partition.parts'"));
}

TEST(JobConfig, EveryRangeIsChecked) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"partition.parts=0", "partition.parts = 0"},
      {"partition.sample_degree=-1", "partition.sample_degree = -1: must be >= 0"},
      {"model.layers=0", "model.layers = 0: must be in [1, 256]"},
      // The random streams key the layer by 8 bits (common/philox.h): layer 256 would draw layer
      // 0's masks and noise.
      {"model.layers=257", "model.layers = 257: must be in [1, 256]"},
      {"model.hidden=0", "model.hidden = 0"},
      {"model.dropout=1", "model.dropout = 1"},
      {"model.dropout=-0.1", "model.dropout = -0.1"},
      {"training.epochs=0", "training.epochs = 0: must be >= 1"},
      {"training.lr=0", "training.lr = 0"},
      // A positive rate that float32 parameters would take as nothing (it trained nothing).
      {"training.lr=1e-50", "training.lr = 1e-50: must be in [1.1755e-38, 3.4e37]"},
      // Adam's first step, 10 times the rate, overflowed float32 in libtorch (found 2026-12-07).
      {"training.lr=4e37", "training.lr = 4e+37: must be in [1.1755e-38, 3.4e37]"},
      {"training.weight_decay=-1", "training.weight_decay = -1"},
      {"training.eval_every=0", "training.eval_every = 0"},
      {"training.patience=-1", "training.patience = -1: must be >= 0"},
      {"training.threads=-2", "training.threads = -2"},
      {"training.checkpoint_every=-1", "training.checkpoint_every = -1"},
      {"training.recompute=all", "training.recompute = 'all'"},
      {"training.recompute=aggregations",
       "training.recompute = aggregations: saves memory only with model.type sage (model.type is "
       "gcn"},
      {"communication.bits=3", "communication.bits = 3"},
      {"communication.mode=fast", "communication.mode = 'fast'"},
      {"communication.scheme=greedy", "communication.scheme = 'greedy'"},
      {"communication.backend=gloo", "communication.backend = 'gloo'"},
      {"communication.timeout_s=0", "communication.timeout_s = 0"},
      {"communication.timeout_s=1000001", "communication.timeout_s = 1000001: must be in [1, 1e6]"},
      {"communication.timeout_s=1e-9", "communication.timeout_s = 1e-09: must be in [1, 1e6]"},
      {"communication.bit_set=[]", "communication.bit_set = []: must not be empty"},
      {"communication.bit_set=[2, 3]", "communication.bit_set = [2, 3]: entries must be 2, 4 or 8"},
      {"communication.bit_set=[4, 4]", "communication.bit_set = [4, 4]: entries must be"},
      {"communication.lambda=1.5", "communication.lambda = 1.5: must be in [0, 1]"},
      {"communication.lambda=-0.1", "communication.lambda = -0.1"},
      {"communication.group_size=0", "communication.group_size = 0"},
      {"communication.assign_period=0", "communication.assign_period = 0"},
      {"communication.solver=gurobi", "communication.solver = 'gurobi'"},
      {"partition.method=spectral", "partition.method = 'spectral'"},
      {"dataset.format=csv", "dataset.format = 'csv'"},
      {"model.type=gin", "model.type = 'gin'"},
      // YAML's null for a key of named values: not shown as ''.
      {"dataset.features_from_edges=null", "dataset.features_from_edges = null (no value): must"},
      {"model.heads=0", "model.heads = 0: must be >= 1"},
      {"model.heads=2", "model.heads = 2: applies to model.type gat only (1 for gcn)"},
      {"model.attention_dropout=0.5",
       "model.attention_dropout = 0.5: applies to model.type gat only (0 for gcn)"},
      {"model.num_bases=2", "model.num_bases = 2: applies to model.type rgcn only (0 for gcn)"},
      {"model.featureless=embedding",
       "model.featureless = embedding: applies to model.type rgcn only (zeros for gcn)"},
      {"model.featureless=random", "model.featureless = 'random'"},
      {"output.log_level=loud", "output.log_level = 'loud'"},
      {"output.dir=", "output.dir = ''"},
      {"dataset.synthetic.homophily=2", "dataset.synthetic.homophily = 2"},
      {"dataset.synthetic.num_classes=1", "dataset.synthetic.num_classes = 1"},
  };
  for (const auto& [override_text, expected] : cases) {
    const std::string msg = config_error(kDefaultJob, {override_text});
    EXPECT_TRUE(test::contains(msg, expected)) << override_text << " gave: '" << msg << "'";
    EXPECT_TRUE(test::contains(msg, "job.yaml")) << msg;
  }
  EXPECT_TRUE(test::contains(config_error("dataset: {format: ogb}\n"), "dataset.path"));
  EXPECT_TRUE(test::contains(
      config_error("partition: {method: random}\n", {"partition.sample_degree=8"}),
      "partition.sample_degree = 8: applies to partition.method metis and ptscotch only (0 for "
      "random)"));
  EXPECT_TRUE(test::contains(config_error("model: {type: gat, hidden: 64}\n", {"model.heads=5"}),
                             "model.heads = 5: must divide model.hidden (64)"));
  EXPECT_TRUE(test::contains(config_error("model: {type: gat, layers: 1}\n", {"model.heads=2"}),
                             "model.heads = 2: applies to hidden layers"));
  EXPECT_EQ(config_error("model: {type: rgcn, featureless: embedding}\n",
                         {"training.checkpoint_every=10"}),
            "");  // each rank's rows beside the checkpoint (train/checkpoint.h)
  EXPECT_TRUE(test::contains(config_error("model: {type: rgcn}\n", {"model.num_bases=-1"}),
                             "model.num_bases = -1: must be >= 0"));
  EXPECT_TRUE(test::contains(
      config_error("model: {type: rgcn}\n", {"communication.exchange=cover"}),
      "communication.exchange = cover: must be auto, rows or relation_first with model.type rgcn"));
  EXPECT_TRUE(
      test::contains(config_error("model: {type: rgcn}\n", {"training.recompute=aggregations"}),
                     "training.recompute"));
  EXPECT_TRUE(test::contains(config_error("model: {type: gat}\n", {"model.attention_dropout=1"}),
                             "model.attention_dropout = 1: must be in [0, 1)"));
  EXPECT_TRUE(test::contains(config_error("model: {type: gat, hidden: 2048}\n",
                                          {"model.heads=2048", "model.attention_dropout=0.5"}),
                             "model.heads = 2048: must be <= 1024 with model.attention_dropout"));
  EXPECT_TRUE(test::contains(
      config_error("model: {type: gat}\n",
                   {"training.epochs=16777216", "model.attention_dropout=0.5"}),
      "training.epochs = 16777216: must be < 16777216 with model.attention_dropout"));
  EXPECT_TRUE(
      test::contains(config_error("model: {type: gat}\n", {"communication.exchange=cover"}),
                     "communication.exchange = cover: must be auto or rows with model.type gat"));
  EXPECT_TRUE(test::contains(
      config_error("model: {type: sage}\n", {"communication.exchange=relation_first"}),
      "communication.exchange = relation_first: applies to model.type rgcn only"));
}

TEST(JobConfig, DatasetFormatAutoDetectsAPathAndGeneratesWithoutOne) {
  test::TempDir dir;
  // A path alone: the layout is detected when the dataset is loaded, not the generator.
  JobConfig c = load_job_config(write_config(dir, "dataset: {path: data/reddit}\n"));
  EXPECT_STREQ(to_string(c.dataset.format), "auto");
  EXPECT_EQ(c.dataset.path, "data/reddit");
  c = load_job_config("", {"dataset.path=data/reddit"});
  EXPECT_STREQ(to_string(c.dataset.format), "auto");
  // Neither: the generator, with the dataset.synthetic options.
  c = load_job_config(write_config(dir, "dataset: {synthetic: {num_nodes: 3000}}\n"));
  EXPECT_STREQ(to_string(c.dataset.format), "auto");
  EXPECT_TRUE(c.dataset.path.empty());
  EXPECT_EQ(c.dataset.synthetic.num_nodes, 3000);
  // Explicit formats, GraphSAINT included.
  for (const char* format : {"ogb", "numpy", "graphsaint"}) {
    c = load_job_config(
        write_config(dir, std::string("dataset: {format: ") + format + ", path: data/x}\n"));
    EXPECT_STREQ(to_string(c.dataset.format), format);
  }
  EXPECT_STREQ(to_string(load_job_config("", {"dataset.format=synthetic"}).dataset.format),
               "synthetic");
}

TEST(JobConfig, DatasetPathWithSyntheticOrFormatWithoutPathIsAnError) {
  const std::string both = config_error("dataset: {format: synthetic, path: data/x}\n");
  EXPECT_TRUE(test::contains(both,
                             "job.yaml: dataset.path = 'data/x': given with dataset.format = "
                             "synthetic, which reads no files"))
      << both;
  const std::string set =
      config_error(kDefaultJob, {"dataset.format=synthetic", "dataset.path=data/y"});
  EXPECT_TRUE(test::contains(set, "dataset.path = 'data/y'") &&
              test::contains(set, "dataset.format"))
      << set;
  const std::string missing = config_error("dataset: {format: graphsaint}\n");
  EXPECT_TRUE(test::contains(missing, "dataset.path = '': required by dataset.format = graphsaint"))
      << missing;
}

TEST(JobConfig, OverridesApplyAfterTheFile) {
  test::TempDir dir;
  const std::string path = write_config(dir, "model: {hidden: 32}\ntraining: {epochs: 7}\n");
  const JobConfig c =
      load_job_config(path, {"model.hidden=64", "dataset.synthetic.num_nodes=1234",
                             "communication.mode=quant", "partition.dir=", "dataset.path=a=b"});
  EXPECT_EQ(c.model.hidden, 64);
  EXPECT_EQ(c.training.epochs, 7);
  EXPECT_EQ(c.dataset.synthetic.num_nodes, 1234);
  EXPECT_STREQ(to_string(c.communication.mode), "quant");
  EXPECT_EQ(c.partition.dir, "");
  EXPECT_EQ(c.dataset.path, "a=b");
}

TEST(JobConfig, MalformedOverridesAreErrors) {
  EXPECT_TRUE(
      test::contains(config_error(kDefaultJob, {"model.hidden"}), "expected section.key=value"));
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"=3"}), "expected section.key=value"));
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"model.hiden=3"}),
                             "--set: unknown key 'model.hiden', did you mean 'model.hidden'? "
                             "(known keys: model.type"));
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"model=3"}),
                             "--set 'model=3': model is a section; set one of its keys"));
  EXPECT_TRUE(
      test::contains(config_error(kDefaultJob, {"communication.bit_set=[2,"}), "not valid YAML"));
  EXPECT_TRUE(
      test::contains(config_error(kDefaultJob, {"model.hidden=x"}), "--set: key 'model.hidden'"));
  // yaml-cpp's Load read this as nothing (the value's default would have stood).
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"training.epochs=,odel:"}),
                             "--set 'training.epochs=,odel:': not valid YAML"));
  EXPECT_TRUE(test::contains(config_error(kDefaultJob, {"training.epochs=[3"}),
                             "--set 'training.epochs=[3': not valid YAML"));
  // yaml-cpp's Load reads a lone quote as an empty string: the dataset would be the generated one.
  for (const char* value : {"dataset.path=\"", "dataset.path='", "dataset.path=\"data"}) {
    EXPECT_TRUE(test::contains(config_error(kDefaultJob, {value}), "not valid YAML")) << value;
  }
  // A value of several lines would be folded into one, joined by a space, quoted or not.
  for (const char* value :
       {"output.dir=runs/a\nb", "output.dir=\"runs/a\nb\"", "training.epochs=3\n---\n4"}) {
    EXPECT_TRUE(test::contains(config_error(kDefaultJob, {value}), "a value of several lines"))
        << value;
  }
  EXPECT_EQ(config_error(kDefaultJob, {"output.dir=\"runs/a\\nb\""}), "");
  EXPECT_EQ(config_error(kDefaultJob, {"dataset.path="}), "");
  EXPECT_EQ(config_error(kDefaultJob, {"training.checkpoint_dir=null"}), "");
  EXPECT_EQ(config_error(kDefaultJob, {"training.checkpoint_dir=~"}), "");
}

// A value out of range is blamed where it was given: the file, or --set (whose value replaced the
// file's).
TEST(JobConfig, ARangeErrorNamesWhereTheValueWasGiven) {
  const std::string from_set = config_error("training: {epochs: 200}\n", {"training.epochs=-5"});
  EXPECT_TRUE(test::contains(from_set, "job.yaml: --set: training.epochs = -5: must be >= 1"))
      << from_set;
  const std::string generator =
      config_error("dataset: {synthetic: {num_nodes: 100}}\n", {"dataset.synthetic.num_classes=1"});
  EXPECT_TRUE(test::contains(generator, "job.yaml: --set: dataset.synthetic.num_classes = 1"))
      << generator;
  const std::string hetero = config_error("dataset: {synthetic: {heterogeneous: true}}\n",
                                          {"dataset.synthetic.heavy_tailed=true"});
  EXPECT_TRUE(test::contains(hetero, "job.yaml: --set: dataset.synthetic.heavy_tailed = true: "))
      << hetero;
  const std::string lr = config_error("training: {epochs: 2}\n", {"training.lr=1e300"});
  EXPECT_TRUE(test::contains(lr,
                             "job.yaml: --set: training.lr = 1e+300: must be in [1.1755e-38, "
                             "3.4e37]"))
      << lr;
  const std::string from_file = config_error("training: {epochs: -5}\n", {"model.hidden=8"});
  EXPECT_TRUE(test::contains(from_file, "job.yaml: training.epochs = -5: must be >= 1"))
      << from_file;
}

// What YAML itself forbids or types otherwise is refused, never resolved silently: a key twice in
// one mapping, a second document, a quoted number or boolean (a string in YAML).
TEST(JobConfig, DuplicateKeysSecondDocumentsAndQuotedNumbersAreRefused) {
  EXPECT_TRUE(test::contains(config_error("model:\n  type: gcn\n  type: sage\n"),
                             "key 'model.type' is given twice"));
  EXPECT_TRUE(test::contains(config_error("model: {hidden: 8}\nmodel: {dropout: 0.1}\n"),
                             "key 'model' is given twice"));
  // A key spelt dotted beside its section is the same key.
  EXPECT_TRUE(test::contains(config_error("training.epochs: 3\ntraining:\n  epochs: 7\n"),
                             "job.yaml: key 'training.epochs' is given twice"));
  EXPECT_TRUE(test::contains(config_error("output: {dir: a}\noutput.dir: b\n"),
                             "job.yaml: key 'output.dir' is given twice"));
  EXPECT_TRUE(
      test::contains(config_error("dataset:\n  synthetic.seed: 3\n  synthetic: {seed: 4}\n"),
                     "job.yaml: key 'dataset.synthetic.seed' is given twice"));
  EXPECT_EQ(config_error("training.epochs: 3\ntraining: {lr: 0.1}\n"), "");
  EXPECT_TRUE(test::contains(config_error("model: {hidden: 8}\n---\nmodel: {hidden: 9}\n"),
                             "job.yaml: line 2: a second YAML document ('---'); one is read"));
  EXPECT_TRUE(test::contains(config_error("model: {hidden: 8}\n...\nmodel: {hidden: 9}\n"),
                             "line 3: content after the document's end ('...')"));
  // A document that starts on its marker's line, and an empty one before another, are documents.
  EXPECT_TRUE(test::contains(config_error("--- {model: {hidden: 8}}\n--- {bogus: 1}\n"),
                             "job.yaml: line 2: a second YAML document ('---'); one is read"));
  EXPECT_TRUE(test::contains(config_error("---\n---\nmodel: {hidden: 9}\n"),
                             "job.yaml: line 2: a second YAML document ('---'); one is read"));
  EXPECT_EQ(config_error("--- {model: {hidden: 8}}\n"), "");
  EXPECT_EQ(config_error("--- # a job\nmodel: {hidden: 8}\n"), "");
  // A leading marker, comments and a document end are one document.
  EXPECT_EQ(config_error("# a job\n---\nmodel: {hidden: 8}\n...\n"), "");
  // yaml-cpp's LoadAll never returned on this (0.7); its Load reads it as an empty document.
  EXPECT_TRUE(test::contains(config_error(",odel:\n  dru\n"),
                             "not valid YAML: nothing could be read from it"));
  EXPECT_TRUE(test::contains(config_error("training: {epochs: \"3\"}\n"),
                             "key 'training.epochs' expects an integer (unquoted), got '3'"));
  EXPECT_TRUE(test::contains(config_error("training: {epochs: !!str 3}\n"),
                             "key 'training.epochs' expects an integer (unquoted), got "
                             "'!!str 3'"));
  EXPECT_EQ(config_error("training: {epochs: !!int 3}\n"), "");
  EXPECT_TRUE(test::contains(config_error("training: {lr: '0.02'}\n"),
                             "key 'training.lr' expects a number (unquoted)"));
  // A tag of another kind, or one YAML does not define, is refused rather than ignored.
  EXPECT_TRUE(test::contains(config_error("training: {epochs: !!float 3}\n"),
                             "key 'training.epochs' expects an integer (unquoted), got "
                             "'!!float 3'"));
  EXPECT_TRUE(test::contains(config_error("training: {lr: !mine 0.5}\n"),
                             "key 'training.lr' expects a number (unquoted), got "
                             "'!mine 0.5'"));
  EXPECT_TRUE(test::contains(config_error("training: {sparse_features: !!int true}\n"),
                             "expects true or false, got '!!int true'"));
  // A local tag that ends in a kind's name is not that kind's.
  EXPECT_TRUE(test::contains(config_error("training: {epochs: !xint 3}\n"),
                             "key 'training.epochs' expects an integer (unquoted), got '!xint 3'"));
  EXPECT_TRUE(test::contains(config_error("dataset: {path: !!int 5}\n"),
                             "key 'dataset.path' expects a string, got '!!int 5'"));
  EXPECT_EQ(config_error("training: {lr: !!float 0.5, epochs: 3, sparse_features: !!bool true}\n"
                         "dataset: {path: !!str 5, split: !!null ~}\n"),
            "");
  // Past the type's range is not "not an integer".
  EXPECT_TRUE(test::contains(config_error("model: {hidden: 2147483648}\n"),
                             "key 'model.hidden' expects an integer in [-2147483648, 2147483647], "
                             "got '2147483648'"));
  EXPECT_TRUE(test::contains(config_error("training: {seed: 18446744073709551616}\n"),
                             "expects an integer in [0, 18446744073709551615]"));
  EXPECT_TRUE(test::contains(config_error("training: {sparse_features: \"true\"}\n"),
                             "expects true or false"));
  EXPECT_EQ(config_error("dataset: {path: \"quoted is a string\"}\ntraining: {epochs: 3}\n"), "");
}

TEST(JobConfig, MissingOrInvalidFileIsNamed) {
  test::TempDir dir;
  try {
    load_job_config(dir.str("absent.yaml"));
    FAIL() << "missing file accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(
        test::contains(e.what(), dir.str("absent.yaml") + ": job configuration file not found"))
        << e.what();
  }
  try {
    load_job_config(dir.str());
    FAIL() << "a directory accepted as the job's file";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(test::contains(e.what(), ": job configuration file is not a regular file"))
        << e.what();
  }
  EXPECT_TRUE(test::contains(config_error("model: {hidden: [1,\n"), "not valid YAML"));
  // yaml-cpp's Load reads a quote left open before the text's final newline to the end of the
  // text: the keys after it would be one path's characters.
  for (const std::string text : {"output:\n  dir: \"runs/q\ntraining:\n  epochs: 2\n",
                                 "output:\n  dir: 'runs/q\ntraining:\n  epochs: 2\n\n",
                                 "training:\n  epochs: 2\noutput:\n  dir: \"\n"}) {
    EXPECT_TRUE(test::contains(config_error(text), "job.yaml: not valid YAML")) << text;
  }
  EXPECT_TRUE(test::contains(config_error("- 1\n- 2\n"), "expected a mapping"));
  // An empty file would run the default job in the place of the one meant.
  for (const std::string text : {"", "\n", "# every key commented out\n", "---\n...\n",
                                 "dataset:\n", "{}\n", "model: {}\ntraining:\n"}) {
    EXPECT_TRUE(test::contains(config_error(text + "\n"), "job.yaml: holds no keys")) << text;
  }
}

TEST(JobConfig, ToYamlRoundTrips) {
  test::TempDir dir;
  JobConfig c =
      load_job_config("", {"training.lr=0.001", "training.weight_decay=1e-7",
                           "dataset.synthetic.avg_degree=3.3", "dataset.split=true",
                           "training.seed=18446744073709551615", "communication.timeout_s=1.5",
                           "communication.bit_set=[4, 8]", "communication.lambda=0.3"});
  c.output.dir = "with space: and colon";
  const std::string text = to_yaml(c);
  const JobConfig back = load_job_config(write_config(dir, text));
  EXPECT_EQ(to_yaml(back), text);
  EXPECT_EQ(back.training.lr, 0.001);
  EXPECT_EQ(back.training.weight_decay, 1e-7);
  EXPECT_EQ(back.dataset.synthetic.avg_degree, 3.3);
  EXPECT_EQ(back.output.dir, "with space: and colon");
  EXPECT_EQ(back.dataset.split, "true");
  EXPECT_EQ(back.training.seed, 18446744073709551615u);
  EXPECT_EQ(back.communication.timeout_s, 1.5);
  EXPECT_EQ(back.communication.bit_set, (std::vector<int>{4, 8}));
  EXPECT_EQ(back.communication.lambda, 0.3);
  EXPECT_TRUE(test::contains(text, "bit_set: [4, 8]")) << text;
  EXPECT_TRUE(test::contains(text, "synthetic:\n    num_nodes: 10000")) << text;
}

// What a partition directory records of the data: the same data however it is named (a trailing
// separator, format auto or explicit), the generator's keys only for a generated graph.
TEST(JobConfig, DatasetIdentityNamesTheDataNotItsSpelling) {
  const auto identity = [](const std::vector<std::string>& overrides) {
    return dataset_identity(load_job_config("", overrides));
  };
  const auto cora = identity({"dataset.path=data/cora", "dataset.format=auto"});
  EXPECT_EQ(identity({"dataset.path=data/cora/", "dataset.format=ogb"}), cora);
  EXPECT_EQ(cora, load_job_config("", {"dataset.path=data/cora"}).partition.options.dataset_keys);
  const auto has = [](const std::vector<std::pair<std::string, std::string>>& keys,
                      const std::string& key) {
    return std::any_of(keys.begin(), keys.end(), [&](const auto& kv) { return kv.first == key; });
  };
  EXPECT_FALSE(has(cora, "dataset.format"));
  EXPECT_FALSE(has(cora, "dataset.synthetic.num_nodes"));
  EXPECT_NE(identity({"dataset.path=data/citeseer"}), cora);
  const auto generated = identity({});
  EXPECT_TRUE(has(generated, "dataset.synthetic.num_nodes"));
  EXPECT_EQ(identity({"dataset.format=synthetic"}), generated);
  EXPECT_NE(identity({"dataset.synthetic.num_nodes=500"}), generated);
}

}  // namespace
}  // namespace adaqp
