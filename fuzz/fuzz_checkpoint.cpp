// Fuzzes the checkpoint reader. A valid checkpoint of a small model after one Adam step is written
// once; the low bit of the first input byte picks what to change: 0, the file's bytes (the rest of
// the input: nearly every such input stops at a checksum); 1, one array past its checksum (the rest
// is an edit of mutate_arrays, written with correct checksums, so the header, progress, shape and
// parameter checks are what stop it). Then the file is read as a resuming job does
// (read_checkpoint_info, load_checkpoint against the job's header). load_checkpoint promises that
// an error changes nothing: the target checks the model's parameters and Adam's state after every
// rejected input, and a change escapes as a crash.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/train/checkpoint.h"
#include "fuzz_util.h"

namespace {

struct Net : torch::nn::Module {
  Net() {
    first = register_module("first", torch::nn::Linear(4, 5));
    second = register_module("second", torch::nn::Linear(5, 3));
  }
  torch::nn::Linear first{nullptr}, second{nullptr};
};

struct Job {
  std::filesystem::path path;
  adaqp::CheckpointHeader header;
  std::shared_ptr<Net> net;
  std::unique_ptr<torch::optim::Adam> adam;
  std::string bytes;
  std::vector<adaqp::fuzz::RawArray> arrays;
};

Job& job() {
  static Job j = [] {
    Job out;
    out.path = adaqp::fuzz::scratch_dir() / "ckpt-000001.bin";
    out.header.dataset_fingerprint = "abc123";
    out.header.model_type = "gcn";
    out.header.layers = 2;
    out.header.hidden = 5;
    out.header.in_dim = 4;
    out.header.out_dim = 3;
    out.header.world_size = 2;
    out.header.seed = 7;
    torch::manual_seed(1);
    out.net = std::make_shared<Net>();
    out.adam = std::make_unique<torch::optim::Adam>(out.net->parameters(),
                                                    torch::optim::AdamOptions(0.05));
    const at::Tensor x = at::arange(20, at::kFloat).view({5, 4}).sin();
    out.adam->zero_grad();
    out.net->second->forward(at::relu(out.net->first->forward(x))).pow(2).mean().backward();
    out.adam->step();
    adaqp::CheckpointProgress progress;
    progress.epoch = 1;
    adaqp::save_checkpoint(out.path.string(), out.header, progress, *out.net, *out.adam);
    out.bytes = adaqp::fuzz::read_file(out.path);
    out.arrays = adaqp::fuzz::read_arrays(out.path);
    return out;
  }();
  return j;
}

// The parameters and every Adam state tensor, in a fixed order.
std::vector<at::Tensor> state(Job& j) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : j.net->parameters()) out.push_back(p.detach().clone());
  for (const auto& [key, s] : j.adam->state()) {
    const auto& a = static_cast<const torch::optim::AdamParamState&>(*s);
    out.push_back(torch::full({1}, static_cast<double>(a.step())));
    out.push_back(a.exp_avg().clone());
    out.push_back(a.exp_avg_sq().clone());
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Job& j = job();
  if ((data[0] & 1) == 0)
    adaqp::fuzz::write_file(j.path, data + 1, size - 1);
  else
    adaqp::fuzz::write_arrays(j.path, adaqp::fuzz::mutate_arrays(j.arrays, data + 1, size - 1));
  const std::vector<at::Tensor> before = state(j);
  try {
    adaqp::read_checkpoint_info(j.path.string());
    adaqp::load_checkpoint(j.path.string(), j.header, *j.net, *j.adam);
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
    const std::vector<at::Tensor> after = state(j);
    bool same = before.size() == after.size();
    for (size_t i = 0; same && i < before.size(); ++i) same = at::equal(before[i], after[i]);
    if (!same)
      throw std::logic_error(std::string("a rejected checkpoint changed the model: ") + e.what());
  }
  // An accepted mutant may have loaded other values: every run starts from the valid checkpoint.
  adaqp::fuzz::write_file(j.path, j.bytes);
  adaqp::load_checkpoint(j.path.string(), j.header, *j.net, *j.adam);
  return 0;
}
