#include "adaqp/train/checkpoint.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/nn/module.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "adaqp/common/array_file.h"
#include "adaqp/common/choices.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

std::vector<uint8_t> text_bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

// One value of an array that must hold exactly `n` values.
template <typename T>
std::vector<T> get_exact(const ArrayFileReader& in, const std::string& path,
                         const std::string& name, size_t n) {
  std::vector<T> v = in.get<T>(name);
  if (v.size() != n)
    throw InputError(path, name, fmt::format("expected {} values, found {}", n, v.size()));
  return v;
}

std::vector<int64_t> sizes_of(const at::Tensor& t) {
  return {t.sizes().begin(), t.sizes().end()};
}

std::vector<float> values_of(const at::Tensor& t) {
  ADAQP_CHECK(t.scalar_type() == at::kFloat, "checkpointed tensors are float32");
  const at::Tensor c = t.detach().to(at::kCPU).contiguous();  // from whichever device
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

// InputError naming the array and index of the first value of `values` that is not finite.
void require_finite(const std::vector<float>& values, const std::string& path,
                    const std::string& name) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      throw InputError(path, name + " index " + std::to_string(i),
                       fmt::format("value {} is not finite", values[i]));
  }
}

// Whether array `name` holds Adam's second moments (a running mean of squared gradients, and
// their running maximum), which cannot be negative: Adam would divide by the square root of one.
bool second_moment(const std::string& name) {
  return name.size() >= 10 && (name.compare(name.size() - 10, 10, "exp_avg_sq") == 0);
}

// InputError for the first value of `values` that is not finite, or (Adam's second moments) that
// is negative. A run that diverged stops before its next checkpoint (train/finite_check.h): such
// a value is damage, found here rather than as a divergence some epochs after the resume.
void require_valid(const std::vector<float>& values, const std::string& path,
                   const std::string& name) {
  require_finite(values, path, name);
  if (!second_moment(name)) return;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0)
      throw InputError(
          path, name + " index " + std::to_string(i),
          fmt::format("value {} is negative (a mean of squared gradients)", values[i]));
  }
}

// A float32 tensor of `sizes` from array `name`, whose length must match.
at::Tensor tensor_of(const ArrayFileReader& in, const std::string& path, const std::string& name,
                     const std::vector<int64_t>& sizes) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const std::vector<float> v = get_exact<float>(in, path, name, static_cast<size_t>(numel));
  require_valid(v, path, name);
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(at::kFloat));
  std::copy(v.begin(), v.end(), t.data_ptr<float>());
  return t;
}

// The arrays of a checkpoint (save_checkpoint): its header and progress, and per parameter X
// param/X with shape/X, best/X and Adam's adam/X/... . Checksums cover the payloads only: a
// damaged name or element type is found here, by arrays that do not fit together, so that the
// file counts as unreadable (an older intact checkpoint is used) rather than failing a resume.
void check_inventory(const ArrayFileReader& in, const std::string& path) {
  static const std::set<std::string> kFixed = {
      "header/format_version", "header/dataset_fingerprint",
      "header/model_type",     "header/model_shape",
      "header/model_heads",    "header/model_num_bases",
      "header/world",          "header/embedding",
      "header/seed",           "header/metric",
      "progress/epoch",        "progress/best",
      "progress/best_epoch"};
  const auto require = [&](bool ok, const std::string& name, const std::string& why) {
    if (!ok) throw InputError(path, "array '" + name + "'", why);
  };
  // Elements of param/X (whose shape/X must give them), for every other array of X.
  const auto param_count = [&](const std::string& name, const std::string& x) {
    require(in.has("param/" + x) && in.has("shape/" + x), name,
            "belongs to parameter '" + x + "', of which the file has no param/ and shape/ array");
    const std::vector<int64_t> shape = in.get<int64_t>("shape/" + x);
    uint64_t n = 1;
    for (int64_t d : shape) {
      require(d >= 0, "shape/" + x, fmt::format("negative size {}", d));
      n *= static_cast<uint64_t>(d);
    }
    require(
        in.count("param/" + x) == n, "param/" + x,
        fmt::format("{} values for shape [{}]", in.count("param/" + x), fmt::join(shape, ", ")));
    return n;
  };
  for (const auto& [name, dtype] : in.arrays()) {
    if (kFixed.count(name) != 0) continue;
    const size_t slash = name.find('/');
    const std::string kind = name.substr(0, slash);
    const std::string rest = slash == std::string::npos ? "" : name.substr(slash + 1);
    if (kind == "param" || kind == "shape" || kind == "best") {
      require(dtype == (kind == "shape" ? DType::I64 : DType::F32), name,
              "has another element type than a checkpoint writes");
      const uint64_t n = param_count(name, rest);
      require(kind != "best" || in.count(name) == n, name,
              fmt::format("{} values, the parameter has {}", in.count(name), n));
      continue;
    }
    const size_t last = rest.rfind('/');
    const std::string x = rest.substr(0, last), field = rest.substr(last + 1);
    const bool moment = field == "exp_avg" || field == "exp_avg_sq" || field == "max_exp_avg_sq";
    require(kind == "adam" && last != std::string::npos && (field == "step" || moment), name,
            "is not an array a checkpoint holds");
    require(dtype == (moment ? DType::F32 : DType::I64), name,
            "has another element type than a checkpoint writes");
    const uint64_t n = param_count(name, x);
    require(in.count(name) == (moment ? n : 1), name,
            fmt::format("{} values, expected {}", in.count(name), moment ? n : 1));
    const std::string prefix = "adam/" + x + "/";
    require(in.has(prefix + "step") && in.has(prefix + "exp_avg") && in.has(prefix + "exp_avg_sq"),
            name, "Adam's state of '" + x + "' is incomplete (step, exp_avg, exp_avg_sq)");
  }
}

// The arrays of one rank's learned rows (save_embedding_rows), checked as check_inventory does.
void check_embedding_inventory(const ArrayFileReader& in, const std::string& path) {
  const auto require = [&](bool ok, const std::string& name, const std::string& why) {
    if (!ok) throw InputError(path, "array '" + name + "'", why);
  };
  const std::vector<int64_t> shape = get_exact<int64_t>(in, path, "embedding/shape", 2);
  require(shape[0] >= 0 && shape[1] >= 0, "embedding/shape",
          fmt::format("negative size in [{}]", fmt::join(shape, ", ")));
  const uint64_t rows = static_cast<uint64_t>(shape[0]);
  const uint64_t values = rows * static_cast<uint64_t>(shape[1]);
  const bool adam = in.has("embedding/adam_step");
  for (const auto& [name, dtype] : in.arrays()) {
    if (name == "embedding/origin") {  // text: compared where the rows are loaded
      require(dtype == DType::U8, name, "has another element type than a checkpoint writes");
      continue;
    }
    const bool id_like = name == "embedding/gids" || name == "embedding/adam_step";
    const bool moment = name == "embedding/exp_avg" || name == "embedding/exp_avg_sq" ||
                        name == "embedding/max_exp_avg_sq";
    const bool known = id_like || moment || name == "embedding/shape" || name == "embedding/rows" ||
                       name == "embedding/best_rows";
    require(known, name, "is not an array of learned rows");
    if (name == "embedding/shape") continue;
    require(dtype == (id_like ? DType::I64 : DType::F32), name,
            "has another element type than a checkpoint writes");
    const uint64_t n = name == "embedding/gids" ? rows : name == "embedding/adam_step" ? 1 : values;
    require(in.count(name) == n, name, fmt::format("{} values, expected {}", in.count(name), n));
    require(!moment || adam, name, "Adam's moments without embedding/adam_step");
  }
  require(in.has("embedding/gids") && in.has("embedding/rows"), "embedding/rows",
          "embedding/gids or embedding/rows missing");
  require(!adam || (in.has("embedding/exp_avg") && in.has("embedding/exp_avg_sq")),
          "embedding/adam_step", "Adam's state is incomplete (exp_avg, exp_avg_sq)");
}

CheckpointInfo read_info(const ArrayFileReader& in, const std::string& path) {
  check_inventory(in, path);
  CheckpointInfo info;
  CheckpointHeader& h = info.header;
  // Compared as read, before it is narrowed to int.
  const int64_t version = get_exact<int64_t>(in, path, "header/format_version", 1)[0];
  if (version != kCheckpointFormatVersion)
    throw InputError(path, "header/format_version",
                     fmt::format("format version {} is not supported (this build reads version {})",
                                 version, kCheckpointFormatVersion));
  h.format_version = kCheckpointFormatVersion;
  h.dataset_fingerprint = in.text("header/dataset_fingerprint");
  h.model_type = in.text("header/model_type");
  if (in.has("header/metric")) h.metric = in.text("header/metric");
  const std::vector<int64_t> shape = get_exact<int64_t>(in, path, "header/model_shape", 5);
  h.layers = shape[0];
  h.hidden = shape[1];
  h.in_dim = shape[2];
  h.out_dim = shape[3];
  h.layer_norm = shape[4] != 0;
  h.heads =
      in.has("header/model_heads") ? get_exact<int64_t>(in, path, "header/model_heads", 1)[0] : 0;
  h.num_bases = in.has("header/model_num_bases")
                    ? get_exact<int64_t>(in, path, "header/model_num_bases", 1)[0]
                    : -1;
  constexpr int64_t kMostInt = std::numeric_limits<int>::max();
  const std::vector<int64_t> world = get_exact<int64_t>(in, path, "header/world", 2);
  if (world[0] < 1 || world[0] > kMostInt || world[1] < 0 || world[1] >= world[0])
    throw InputError(path, "header/world",
                     fmt::format("rank {} of {} workers", world[1], world[0]));
  h.world_size = static_cast<int>(world[0]);
  h.rank = static_cast<int>(world[1]);
  if (in.has("header/embedding")) {
    const int64_t embedding = get_exact<int64_t>(in, path, "header/embedding", 1)[0];
    if (embedding != 0 && embedding != 1)
      throw InputError(path, "header/embedding index 0",
                       fmt::format("value {} is not 0 or 1", embedding));
    h.embedding = embedding == 1;
  }
  const int64_t seed = get_exact<int64_t>(in, path, "header/seed", 1)[0];
  std::memcpy(&h.seed, &seed, sizeof seed);
  CheckpointProgress& p = info.progress;
  const int64_t epoch = get_exact<int64_t>(in, path, "progress/epoch", 1)[0];
  if (epoch < 1 || epoch > kMostInt)
    throw InputError(path, "progress/epoch",
                     fmt::format("epoch {} outside 1..{}", epoch, kMostInt));
  p.epoch = static_cast<int>(epoch);
  // (whether a best epoch was scored, its validation score, the test score there)
  const std::vector<double> best = get_exact<double>(in, path, "progress/best", 3);
  if (best[0] != 0 && best[0] != 1)
    throw InputError(path, "progress/best index 0", fmt::format("value {} is not 0 or 1", best[0]));
  // Scores (accuracy, micro-F1) lie in [0, 1]; NaN fails the test too.
  for (size_t i = 1; i < best.size(); ++i) {
    if (!(best[i] >= 0 && best[i] <= 1))
      throw InputError(path, fmt::format("progress/best index {}", i),
                       fmt::format("value {} is not a score in [0, 1]", best[i]));
  }
  p.have_best = best[0] != 0;
  p.best_val = best[1];
  p.test_at_best_val = best[2];
  if (in.has("progress/best_epoch")) {
    const int64_t best_epoch = get_exact<int64_t>(in, path, "progress/best_epoch", 1)[0];
    const int lowest = p.have_best ? 1 : 0, highest = p.have_best ? p.epoch : 0;
    if (best_epoch < lowest || best_epoch > highest)
      throw InputError(path, "progress/best_epoch",
                       fmt::format("epoch {} outside {}..{}", best_epoch, lowest, highest));
    p.best_epoch = static_cast<int>(best_epoch);
  } else {
    p.best_epoch = p.have_best ? p.epoch : 0;
    p.best_epoch_recorded = false;
  }
  return info;
}

template <typename T>
void require_same(const std::string& path, const std::string& field, const T& found,
                  const T& expected) {
  if (!(found == expected))
    throw InputError(path, field,
                     fmt::format("checkpoint has {}, this job has {}", found, expected));
}

void check_header(const std::string& path, const CheckpointHeader& f, const CheckpointHeader& e) {
  require_same(path, "dataset fingerprint", f.dataset_fingerprint, e.dataset_fingerprint);
  check_job_header(path, f, e);
  require_same(path, "model input dimension (dataset features)", f.in_dim, e.in_dim);
  require_same(path, "model output dimension (dataset classes)", f.out_dim, e.out_dim);
  require_same(path, "learned featureless rows (model.featureless = embedding)", f.embedding,
               e.embedding);
  check_checkpoint_metric(path, f.metric, e.metric);
}

// The state read for one parameter, applied only once every parameter has been read.
struct StagedParam {
  at::Tensor param;  // the model's parameter
  at::Tensor values;
  at::Tensor best;                                     // its values at the best epoch, if asked
  std::unique_ptr<torch::optim::AdamParamState> adam;  // null: no step taken yet
};

}  // namespace

void check_checkpoint_metric(const std::string& path, const std::string& found,
                             const std::string& expected) {
  // A file without one was scored as auto scores.
  if (!found.empty()) {
    require_same(path, "training.metric", found, expected);
  } else if (expected == to_string(ScoreMetric::kRocAuc)) {
    throw InputError(path, "training.metric",
                     "checkpoint was scored by accuracy or f1_micro (written before "
                     "training.metric), this job has rocauc");
  }
}

void check_job_header(const std::string& path, const CheckpointHeader& found,
                      const CheckpointHeader& expected) {
  require_same(path, "model.type", found.model_type, expected.model_type);
  require_same(path, "model.layers", found.layers, expected.layers);
  require_same(path, "model.hidden", found.hidden, expected.hidden);
  // One layer has no hidden layer to normalise: files written before model.layer_norm was refused
  // there may record it either way.
  if (expected.layers > 1)
    require_same(path, "model.layer_norm", found.layer_norm, expected.layer_norm);
  if (found.heads != 0) require_same(path, "model.heads", found.heads, expected.heads);
  if (found.num_bases >= 0)
    require_same(path, "model.num_bases", found.num_bases, expected.num_bases);
  require_same(path, "training.seed", found.seed, expected.seed);
}

std::string checkpoint_path(const std::string& dir, int epoch) {
  return (std::filesystem::path(dir) / fmt::format("ckpt-{:06d}.bin", epoch)).string();
}

ArrayFileWriter checkpoint_arrays(const CheckpointHeader& header,
                                  const CheckpointProgress& progress,
                                  const torch::nn::Module& model,
                                  const torch::optim::Adam& optimizer, const ModelSnapshot* best) {
  const auto named = model.named_parameters();
  ADAQP_CHECK(best == nullptr || best->params.size() == named.size(),
              "the best epoch's parameters and the model's");
  ArrayFileWriter out;
  out.add("header/format_version", std::vector<int64_t>{header.format_version});
  out.add("header/dataset_fingerprint", text_bytes(header.dataset_fingerprint));
  out.add("header/model_type", text_bytes(header.model_type));
  out.add("header/model_shape", std::vector<int64_t>{header.layers, header.hidden, header.in_dim,
                                                     header.out_dim, header.layer_norm ? 1 : 0});
  out.add("header/model_heads", std::vector<int64_t>{header.heads});
  out.add("header/model_num_bases", std::vector<int64_t>{header.num_bases});
  out.add("header/world", std::vector<int64_t>{header.world_size, header.rank});
  out.add("header/embedding", std::vector<int64_t>{header.embedding ? 1 : 0});
  out.add("header/metric", text_bytes(header.metric));
  int64_t seed = 0;
  std::memcpy(&seed, &header.seed, sizeof seed);
  out.add("header/seed", std::vector<int64_t>{seed});
  out.add("progress/epoch", std::vector<int64_t>{progress.epoch});
  out.add("progress/best", std::vector<double>{progress.have_best ? 1.0 : 0.0, progress.best_val,
                                               progress.test_at_best_val});
  out.add("progress/best_epoch", std::vector<int64_t>{progress.best_epoch});
  const auto& state = optimizer.state();
  for (size_t i = 0; i < named.size(); ++i) {
    const std::string& name = named[i].key();
    const at::Tensor& p = named[i].value();
    out.add("param/" + name, values_of(p));
    out.add("shape/" + name, sizes_of(p));
    if (best != nullptr) out.add("best/" + name, values_of(best->params[i]));
    const auto it = state.find(p.unsafeGetTensorImpl());
    if (it == state.end()) continue;
    const auto* s = dynamic_cast<const torch::optim::AdamParamState*>(it->second.get());
    ADAQP_CHECK(s != nullptr, "optimizer state of parameter " + name + " is not Adam's");
    const std::string prefix = "adam/" + name + "/";
    out.add(prefix + "step", std::vector<int64_t>{s->step()});
    out.add(prefix + "exp_avg", values_of(s->exp_avg()));
    out.add(prefix + "exp_avg_sq", values_of(s->exp_avg_sq()));
    if (s->max_exp_avg_sq().defined())
      out.add(prefix + "max_exp_avg_sq", values_of(s->max_exp_avg_sq()));
  }
  return out;
}

void save_checkpoint(const std::string& path, const CheckpointHeader& header,
                     const CheckpointProgress& progress, const torch::nn::Module& model,
                     const torch::optim::Adam& optimizer, const ModelSnapshot* best) {
  checkpoint_arrays(header, progress, model, optimizer, best).write(path);
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  const ArrayFileReader in(path);
  CheckpointInfo info = read_info(in, path);
  for (const auto& [name, dtype] : in.arrays())
    info.best_params = info.best_params || name.rfind("best/", 0) == 0;
  for (int r = 0; info.header.embedding && r < info.header.world_size; ++r) {
    const std::string rows = embedding_path(path, r);
    check_embedding_inventory(ArrayFileReader(rows), rows);  // the file whole, and its arrays
  }
  return info;
}

std::string embedding_path(const std::string& checkpoint, int rank) {
  const std::filesystem::path p(checkpoint);
  return (p.parent_path() / fmt::format("{}.emb-{:04d}.bin", p.stem().string(), rank)).string();
}

namespace {

std::string origin_text(const EmbeddingOrigin& o) {
  return fmt::format("dataset {}, seed {}, epoch {}", o.dataset_fingerprint, o.seed, o.epoch);
}

// The Adam step of the model's parameters (all step together), or 0 before any step.
int64_t parameters_step(const torch::optim::Adam& optimizer, const at::Tensor& rows) {
  for (const auto& [key, state] : optimizer.state()) {
    if (key == rows.unsafeGetTensorImpl()) continue;
    if (const auto* s = dynamic_cast<const torch::optim::AdamParamState*>(state.get()))
      return s->step();
  }
  return 0;
}

}  // namespace

void save_embedding_rows(const std::string& path, const EmbeddingOrigin& origin,
                         const std::vector<int64_t>& gids, const at::Tensor& rows,
                         const torch::optim::Adam& optimizer, const at::Tensor* best_rows) {
  ADAQP_CHECK(rows.dim() == 2 && rows.size(0) == static_cast<int64_t>(gids.size()),
              "embedding rows and their node ids");
  ArrayFileWriter out;
  const std::string text = origin_text(origin);
  out.add("embedding/origin", std::vector<uint8_t>(text.begin(), text.end()));
  out.add("embedding/gids", gids);
  out.add("embedding/shape", sizes_of(rows));
  out.add("embedding/rows", values_of(rows));
  if (best_rows != nullptr) {
    ADAQP_CHECK(best_rows->sizes() == rows.sizes(), "the best epoch's embedding rows");
    out.add("embedding/best_rows", values_of(*best_rows));
  }
  const auto& state = optimizer.state();
  if (const auto it = state.find(rows.unsafeGetTensorImpl()); it != state.end()) {
    const auto* s = dynamic_cast<const torch::optim::AdamParamState*>(it->second.get());
    ADAQP_CHECK(s != nullptr, "optimizer state of the embedding rows is not Adam's");
    out.add("embedding/adam_step", std::vector<int64_t>{s->step()});
    out.add("embedding/exp_avg", values_of(s->exp_avg()));
    out.add("embedding/exp_avg_sq", values_of(s->exp_avg_sq()));
    if (s->max_exp_avg_sq().defined())
      out.add("embedding/max_exp_avg_sq", values_of(s->max_exp_avg_sq()));
  }
  out.write(path);
}

void load_embedding_rows(const std::string& checkpoint, int ranks, const EmbeddingOrigin& origin,
                         int64_t num_nodes, const std::vector<int64_t>& gids,
                         const at::Tensor& rows, torch::optim::Adam& optimizer,
                         at::Tensor* best_rows) {
  ADAQP_CHECK(rows.dim() == 2 && rows.size(0) == static_cast<int64_t>(gids.size()),
              "embedding rows and their node ids");
  const int64_t n = rows.size(0), d = rows.size(1);
  std::unordered_map<int64_t, int64_t> mine;
  for (int64_t k = 0; k < n; ++k) mine.emplace(gids[k], k);
  // Each row's arrays, in this rank's order: its values, then with Adam state exp_avg,
  // exp_avg_sq and (amsgrad) max_exp_avg_sq, then where asked for and written its values at the
  // best epoch.
  const std::vector<std::string> names = {"embedding/rows", "embedding/exp_avg",
                                          "embedding/exp_avg_sq", "embedding/max_exp_avg_sq",
                                          "embedding/best_rows"};
  constexpr size_t kBest = 4;
  std::vector<std::vector<float>> staged(names.size());
  std::vector<bool> present(names.size(), false);
  int64_t step = 0;
  std::vector<uint8_t> found(static_cast<size_t>(n), 0);
  std::vector<std::pair<int64_t, int>> file_of_id;  // every row's node id and file (its rank)
  for (int r = 0; r < ranks; ++r) {
    const std::string path = embedding_path(checkpoint, r);
    const ArrayFileReader in(path);
    if (in.has("embedding/origin")) {
      const std::string written = in.text("embedding/origin");
      const std::string expected = origin_text(origin);
      if (written != expected)
        throw InputError(path, "embedding/origin",
                         fmt::format("is '{}', the checkpoint's '{}': learned rows of another "
                                     "run, dataset or epoch",
                                     written, expected));
    }
    const std::vector<int64_t> shape = get_exact<int64_t>(in, path, "embedding/shape", 2);
    if (shape[0] < 0 || shape[1] != d)
      throw InputError(
          path, "embedding/shape",
          fmt::format("rows [{}], the model's are {} wide", fmt::join(shape, ", "), d));
    const std::vector<int64_t> ids =
        get_exact<int64_t>(in, path, "embedding/gids", static_cast<size_t>(shape[0]));
    for (size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] < 0 || ids[k] >= num_nodes)
        throw InputError(
            path, fmt::format("embedding/gids index {}", k),
            fmt::format("node id {} is outside the graph's [0, {})", ids[k], num_nodes));
      file_of_id.emplace_back(ids[k], r);
    }
    const bool adam = in.has("embedding/adam_step");
    if (r == 0) {
      for (size_t a = 0; a < names.size(); ++a) {
        present[a] = a == 0 || (a == kBest ? best_rows != nullptr && in.has(names[a])
                                           : adam && in.has(names[a]));
        if (present[a]) staged[a].assign(static_cast<size_t>(n * d), 0.0F);
      }
      if (adam) step = get_exact<int64_t>(in, path, "embedding/adam_step", 1)[0];
      if (adam && step < 1)
        throw InputError(path, "embedding/adam_step", fmt::format("step {} < 1", step));
      // The rows step with the parameters: another step is another epoch's file.
      const int64_t params_step = parameters_step(optimizer, rows);
      if (adam && params_step > 0 && step != params_step)
        throw InputError(path, "embedding/adam_step",
                         fmt::format("step {}, the checkpoint's parameters are at step {}: "
                                     "learned rows of another epoch",
                                     step, params_step));
    } else if (adam != present[1] ||
               (adam && get_exact<int64_t>(in, path, "embedding/adam_step", 1)[0] != step)) {
      throw InputError(path, "embedding/adam_step",
                       fmt::format("Adam state unlike {}'s (step {})",
                                   embedding_path(checkpoint, 0), present[1] ? step : 0));
    }
    for (size_t a = 0; a < names.size(); ++a) {
      if (!present[a]) continue;
      const std::vector<float> v =
          get_exact<float>(in, path, names[a], static_cast<size_t>(shape[0] * d));
      require_valid(v, path, names[a]);
      for (int64_t k = 0; k < shape[0]; ++k) {
        const auto it = mine.find(ids[k]);
        if (it == mine.end()) continue;
        std::copy_n(v.begin() + k * d, d, staged[a].begin() + it->second * d);
        found[it->second] = 1;
      }
    }
  }
  // A node's row in two files, or twice in one: one of them is damaged.
  std::sort(file_of_id.begin(), file_of_id.end());
  const auto twice =
      std::adjacent_find(file_of_id.begin(), file_of_id.end(),
                         [](const auto& a, const auto& b) { return a.first == b.first; });
  if (twice != file_of_id.end()) {
    const std::string first = embedding_path(checkpoint, twice->second);
    const std::string second = embedding_path(checkpoint, std::next(twice)->second);
    throw InputError(second, "embedding/gids",
                     fmt::format("node {} has a row here and {}", twice->first,
                                 first == second ? "again in this file" : "in " + first));
  }
  for (int64_t k = 0; k < n; ++k) {
    if (!found[k])
      throw InputError(checkpoint, "embedding/gids",
                       fmt::format("node {}'s embedding row is in none of the checkpoint's {} "
                                   "embedding files ({} to {}, {} rows in all)",
                                   gids[k], ranks, embedding_path(checkpoint, 0),
                                   embedding_path(checkpoint, ranks - 1), file_of_id.size()));
  }
  const auto tensor = [&](size_t a) {
    at::Tensor t = at::empty({n, d}, at::TensorOptions().dtype(at::kFloat));
    std::copy(staged[a].begin(), staged[a].end(), t.data_ptr<float>());
    return t.to(rows.device());
  };
  // Every tensor made before anything changes.
  const at::Tensor values = tensor(0);
  std::unique_ptr<torch::optim::AdamParamState> adam;
  if (present[1]) {
    adam = std::make_unique<torch::optim::AdamParamState>();
    adam->step(step);
    adam->exp_avg(tensor(1));
    adam->exp_avg_sq(tensor(2));
    if (present[3]) adam->max_exp_avg_sq(tensor(3));
  }
  const at::Tensor best = present[kBest] ? tensor(kBest) : at::Tensor();
  at::NoGradGuard no_grad;
  at::Tensor target = rows;
  target.copy_(values);
  if (best_rows != nullptr) *best_rows = best;
  auto& state = optimizer.state();
  void* key = rows.unsafeGetTensorImpl();
  if (adam)
    state[key] = std::move(adam);
  else
    state.erase(key);
}

namespace {

// Why a model's parameter is not in the checkpoint: the parameters it holds that the model lacks
// (another structure the header does not record: model.num_bases in a file written before it was).
std::string missing_parameter(const ArrayFileReader& in, torch::nn::Module& model) {
  const std::string prefix = "param/";
  const auto params = model.named_parameters();
  std::vector<std::string> others;
  for (const auto& [name, dtype] : in.arrays()) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string param = name.substr(prefix.size());
    if (params.find(param) == nullptr) others.push_back(param);
  }
  if (others.empty()) return "parameter missing from the checkpoint";
  return fmt::format(
      "parameter missing from the checkpoint, which holds {} instead: the checkpoint's model has "
      "another structure (a model key changed since it was written)",
      fmt::join(others, ", "));
}

}  // namespace

CheckpointProgress load_checkpoint(const std::string& path, const CheckpointHeader& expected,
                                   torch::nn::Module& model, torch::optim::Adam& optimizer,
                                   ModelSnapshot* best) {
  const ArrayFileReader in(path);
  const CheckpointInfo info = read_info(in, path);
  check_header(path, info.header, expected);

  std::vector<StagedParam> staged;
  for (const auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    StagedParam s;
    s.param = item.value();
    if (!in.has("param/" + name))
      throw InputError(path, "param/" + name, missing_parameter(in, model));
    const std::vector<int64_t> sizes = in.get<int64_t>("shape/" + name);
    if (sizes != sizes_of(s.param))
      throw InputError(path, "shape/" + name,
                       fmt::format("checkpoint has shape [{}], the model has [{}]",
                                   fmt::join(sizes, ", "), fmt::join(sizes_of(s.param), ", ")));
    s.values = tensor_of(in, path, "param/" + name, sizes);
    if (best != nullptr && in.has("best/" + name))
      s.best = tensor_of(in, path, "best/" + name, sizes).to(s.param.device());
    const std::string prefix = "adam/" + name + "/";
    if (in.has(prefix + "step")) {
      s.adam = std::make_unique<torch::optim::AdamParamState>();
      const int64_t step = get_exact<int64_t>(in, path, prefix + "step", 1)[0];
      // Full-graph training takes one optimizer step an epoch.
      if (step < 1 || step > info.progress.epoch) {
        throw InputError(path, prefix + "step",
                         fmt::format("step {} outside 1..{} (one step an epoch, and the checkpoint "
                                     "is of epoch {})",
                                     step, info.progress.epoch, info.progress.epoch));
      }
      s.adam->step(step);
      // Checkpoints are device-independent: the state goes where the parameter lives.
      const c10::Device device = s.param.device();
      s.adam->exp_avg(tensor_of(in, path, prefix + "exp_avg", sizes).to(device));
      s.adam->exp_avg_sq(tensor_of(in, path, prefix + "exp_avg_sq", sizes).to(device));
      if (in.has(prefix + "max_exp_avg_sq"))
        s.adam->max_exp_avg_sq(tensor_of(in, path, prefix + "max_exp_avg_sq", sizes).to(device));
    }
    staged.push_back(std::move(s));
  }

  // The best epoch's values are all there or none (a file written without restore_best).
  const auto kept = [](const StagedParam& s) { return s.best.defined(); };
  const auto missing = std::find_if_not(staged.begin(), staged.end(), kept);
  if (missing != staged.end() && std::any_of(staged.begin(), staged.end(), kept)) {
    const std::string name = model.named_parameters()[missing - staged.begin()].key();
    throw InputError(path, "best/" + name,
                     "missing, while other parameters have their best epoch's values");
  }
  at::NoGradGuard no_grad;
  auto& state = optimizer.state();
  if (best != nullptr) best->params.clear();
  for (StagedParam& s : staged) {
    s.param.copy_(s.values);
    if (s.best.defined()) best->params.push_back(s.best);
    void* key = s.param.unsafeGetTensorImpl();
    if (s.adam)
      state[key] = std::move(s.adam);
    else
      state.erase(key);
  }
  return info.progress;
}

namespace {

// Whether `s` is `min` to `max` decimal digits.
bool all_digits(std::string_view s, size_t min, size_t max) {
  return s.size() >= min && s.size() <= max &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The epoch in the name of a checkpoint, "ckpt-<6 to 9 digits>.bin", or (rows = true) of its
// embedding rows, "ckpt-<6 to 9 digits>.emb-<4 or more digits>.bin"; -1 for any other name.
int named_epoch(std::string_view file, bool rows) {
  constexpr std::string_view kPrefix = "ckpt-", kSuffix = ".bin", kRows = ".emb-";
  if (file.size() < kPrefix.size() + kSuffix.size() || file.substr(0, kPrefix.size()) != kPrefix ||
      file.substr(file.size() - kSuffix.size()) != kSuffix)
    return -1;
  std::string_view epoch =
      file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size());
  if (rows) {
    const size_t at = epoch.find(kRows);
    if (at == std::string_view::npos ||
        !all_digits(epoch.substr(at + kRows.size()), 4, std::string_view::npos))
      return -1;
    epoch = epoch.substr(0, at);
  }
  return all_digits(epoch, 6, 9) ? std::stoi(std::string(epoch)) : -1;
}

}  // namespace

std::vector<int> list_checkpoints(const std::string& dir) {
  std::vector<int> epochs;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return epochs;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::filesystem::directory_entry& entry = *it;
    const std::string file = entry.path().filename().string();
    std::error_code entry_error;
    const int epoch = named_epoch(file, false);
    if (epoch < 0 || std::filesystem::path(checkpoint_path(dir, epoch)).filename() != file)
      continue;
    // Where a checkpoint is written: found now, not when the epoch's checkpoint cannot replace it.
    if (!entry.is_regular_file(entry_error)) {
      throw InputError(entry.path().string(), "",
                       "is not a regular file, where a checkpoint belongs: remove it");
    }
    epochs.push_back(epoch);
  }
  if (ec) throw InputError(dir, "", "cannot list its checkpoints: " + ec.message());
  std::sort(epochs.rbegin(), epochs.rend());
  return epochs;
}

std::string latest_checkpoint(const std::string& dir) {
  for (int epoch : list_checkpoints(dir)) {
    const std::string path = checkpoint_path(dir, epoch);
    try {
      // A recorded epoch that is not the name's would send the ranks to another file.
      const int recorded = read_checkpoint_info(path).progress.epoch;
      if (recorded != epoch) {
        throw InputError(path, "progress/epoch",
                         fmt::format("is {}, but the file is named for epoch {}", recorded, epoch));
      }
      return path;
    } catch (const InputError& e) {
      spdlog::warn("skipping unreadable checkpoint: {}", e.what());
    }
  }
  return "";
}

void prune_checkpoints(const std::string& dir, int keep, int written,
                       const std::vector<int>& skipped) {
  std::vector<int> epochs = list_checkpoints(dir);
  epochs.erase(std::remove_if(epochs.begin(), epochs.end(),
                              [&](int e) {
                                return e > written || std::find(skipped.begin(), skipped.end(),
                                                                e) != skipped.end();
                              }),
               epochs.end());
  const size_t kept = std::min(epochs.size(), static_cast<size_t>(std::max(keep, 0)));
  for (size_t i = kept; i < epochs.size(); ++i) {
    const std::string path = checkpoint_path(dir, epochs[i]);
    std::error_code ec;
    if (!std::filesystem::remove(path, ec) || ec)
      spdlog::warn("cannot delete old checkpoint {}: {}", path, ec.message());
  }
  // Embedding files of the deleted checkpoints, and of none older than the newest.
  if (epochs.empty()) return;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const int epoch = named_epoch(entry.path().filename().string(), true);
    if (epoch < 0) continue;
    if (epoch >= epochs.front() ||
        std::find(epochs.begin(), epochs.begin() + static_cast<std::ptrdiff_t>(kept), epoch) !=
            epochs.begin() + static_cast<std::ptrdiff_t>(kept))
      continue;
    std::error_code e;
    if (!std::filesystem::remove(entry.path(), e) || e)
      spdlog::warn("cannot delete old embedding rows {}: {}", entry.path().string(), e.message());
  }
}

}  // namespace adaqp
