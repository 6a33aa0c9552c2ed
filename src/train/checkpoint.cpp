#include "adaqp/train/checkpoint.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/nn/module.h>
#include <torch/optim/adam.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <regex>
#include <utility>

#include "adaqp/common/array_file.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

std::vector<uint8_t> text_bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

std::string bytes_text(const std::vector<uint8_t>& b) {
  return {b.begin(), b.end()};
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

// A float32 tensor of `sizes` from array `name`, whose length must match.
at::Tensor tensor_of(const ArrayFileReader& in, const std::string& path, const std::string& name,
                     const std::vector<int64_t>& sizes) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const std::vector<float> v = get_exact<float>(in, path, name, static_cast<size_t>(numel));
  at::Tensor t = at::empty(sizes, at::TensorOptions().dtype(at::kFloat));
  std::copy(v.begin(), v.end(), t.data_ptr<float>());
  return t;
}

CheckpointInfo read_info(const ArrayFileReader& in, const std::string& path) {
  CheckpointInfo info;
  CheckpointHeader& h = info.header;
  h.format_version = static_cast<int>(get_exact<int64_t>(in, path, "header/format_version", 1)[0]);
  if (h.format_version != kCheckpointFormatVersion)
    throw InputError(path, "header/format_version",
                     fmt::format("format version {} is not supported (this build reads version {})",
                                 h.format_version, kCheckpointFormatVersion));
  h.dataset_fingerprint = bytes_text(in.get<uint8_t>("header/dataset_fingerprint"));
  h.model_type = bytes_text(in.get<uint8_t>("header/model_type"));
  const std::vector<int64_t> shape = get_exact<int64_t>(in, path, "header/model_shape", 5);
  h.layers = shape[0];
  h.hidden = shape[1];
  h.in_dim = shape[2];
  h.out_dim = shape[3];
  h.layer_norm = shape[4] != 0;
  h.heads =
      in.has("header/model_heads") ? get_exact<int64_t>(in, path, "header/model_heads", 1)[0] : 0;
  const std::vector<int64_t> world = get_exact<int64_t>(in, path, "header/world", 2);
  h.world_size = static_cast<int>(world[0]);
  h.rank = static_cast<int>(world[1]);
  const int64_t seed = get_exact<int64_t>(in, path, "header/seed", 1)[0];
  std::memcpy(&h.seed, &seed, sizeof seed);
  CheckpointProgress& p = info.progress;
  p.epoch = static_cast<int>(get_exact<int64_t>(in, path, "progress/epoch", 1)[0]);
  if (p.epoch < 1) throw InputError(path, "progress/epoch", fmt::format("epoch {} < 1", p.epoch));
  const std::vector<double> best = get_exact<double>(in, path, "progress/best", 3);
  p.have_best = best[0] != 0;
  p.best_val = best[1];
  p.test_at_best_val = best[2];
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
  require_same(path, "model.type", f.model_type, e.model_type);
  require_same(path, "model.layers", f.layers, e.layers);
  require_same(path, "model.hidden", f.hidden, e.hidden);
  require_same(path, "model input dimension (dataset features)", f.in_dim, e.in_dim);
  require_same(path, "model output dimension (dataset classes)", f.out_dim, e.out_dim);
  require_same(path, "model.layer_norm", f.layer_norm, e.layer_norm);
  if (f.heads != 0) require_same(path, "model.heads", f.heads, e.heads);
  require_same(path, "training.seed", f.seed, e.seed);
}

// The state read for one parameter, applied only once every parameter has been read.
struct StagedParam {
  at::Tensor param;  // the model's parameter
  at::Tensor values;
  std::unique_ptr<torch::optim::AdamParamState> adam;  // null: no step taken yet
};

}  // namespace

std::string checkpoint_path(const std::string& dir, int epoch) {
  return (std::filesystem::path(dir) / fmt::format("ckpt-{:06d}.bin", epoch)).string();
}

void save_checkpoint(const std::string& path, const CheckpointHeader& header,
                     const CheckpointProgress& progress, const torch::nn::Module& model,
                     const torch::optim::Adam& optimizer) {
  ArrayFileWriter out;
  out.add("header/format_version", std::vector<int64_t>{header.format_version});
  out.add("header/dataset_fingerprint", text_bytes(header.dataset_fingerprint));
  out.add("header/model_type", text_bytes(header.model_type));
  out.add("header/model_shape", std::vector<int64_t>{header.layers, header.hidden, header.in_dim,
                                                     header.out_dim, header.layer_norm ? 1 : 0});
  out.add("header/model_heads", std::vector<int64_t>{header.heads});
  out.add("header/world", std::vector<int64_t>{header.world_size, header.rank});
  int64_t seed = 0;
  std::memcpy(&seed, &header.seed, sizeof seed);
  out.add("header/seed", std::vector<int64_t>{seed});
  out.add("progress/epoch", std::vector<int64_t>{progress.epoch});
  out.add("progress/best", std::vector<double>{progress.have_best ? 1.0 : 0.0, progress.best_val,
                                               progress.test_at_best_val});
  const auto& state = optimizer.state();
  for (const auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    const at::Tensor& p = item.value();
    out.add("param/" + name, values_of(p));
    out.add("shape/" + name, sizes_of(p));
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
  out.write(path);
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  const ArrayFileReader in(path);
  return read_info(in, path);
}

CheckpointProgress load_checkpoint(const std::string& path, const CheckpointHeader& expected,
                                   torch::nn::Module& model, torch::optim::Adam& optimizer) {
  const ArrayFileReader in(path);
  const CheckpointInfo info = read_info(in, path);
  check_header(path, info.header, expected);

  std::vector<StagedParam> staged;
  for (const auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    StagedParam s;
    s.param = item.value();
    if (!in.has("param/" + name))
      throw InputError(path, "param/" + name, "parameter missing from the checkpoint");
    const std::vector<int64_t> sizes = in.get<int64_t>("shape/" + name);
    if (sizes != sizes_of(s.param))
      throw InputError(path, "shape/" + name,
                       fmt::format("checkpoint has shape [{}], the model has [{}]",
                                   fmt::join(sizes, ", "), fmt::join(sizes_of(s.param), ", ")));
    s.values = tensor_of(in, path, "param/" + name, sizes);
    const std::string prefix = "adam/" + name + "/";
    if (in.has(prefix + "step")) {
      s.adam = std::make_unique<torch::optim::AdamParamState>();
      const int64_t step = get_exact<int64_t>(in, path, prefix + "step", 1)[0];
      if (step < 1) throw InputError(path, prefix + "step", fmt::format("step {} < 1", step));
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

  at::NoGradGuard no_grad;
  auto& state = optimizer.state();
  for (StagedParam& s : staged) {
    s.param.copy_(s.values);
    void* key = s.param.unsafeGetTensorImpl();
    if (s.adam)
      state[key] = std::move(s.adam);
    else
      state.erase(key);
  }
  return info.progress;
}

std::vector<int> list_checkpoints(const std::string& dir) {
  std::vector<int> epochs;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return epochs;
  static const std::regex name("ckpt-([0-9]{6,9})\\.bin");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || !std::regex_match(file, m, name)) continue;
    const int epoch = std::stoi(m[1].str());
    if (std::filesystem::path(checkpoint_path(dir, epoch)).filename() == file)
      epochs.push_back(epoch);
  }
  std::sort(epochs.rbegin(), epochs.rend());
  return epochs;
}

std::string latest_checkpoint(const std::string& dir) {
  for (int epoch : list_checkpoints(dir)) {
    const std::string path = checkpoint_path(dir, epoch);
    try {
      read_checkpoint_info(path);
      return path;
    } catch (const InputError& e) {
      spdlog::warn("skipping unreadable checkpoint: {}", e.what());
    }
  }
  return "";
}

void prune_checkpoints(const std::string& dir, int keep) {
  const std::vector<int> epochs = list_checkpoints(dir);
  for (size_t i = static_cast<size_t>(std::max(keep, 0)); i < epochs.size(); ++i) {
    const std::string path = checkpoint_path(dir, epochs[i]);
    std::error_code ec;
    if (!std::filesystem::remove(path, ec) || ec)
      spdlog::warn("cannot delete old checkpoint {}: {}", path, ec.message());
  }
}

}  // namespace adaqp
