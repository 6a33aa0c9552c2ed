#include "adaqp/train/finite_check.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/nn/module.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

// "nan" (whatever its sign bit), "inf", "-inf" or the number.
std::string value_text(double v) {
  return std::isnan(v) ? "nan" : fmt::format("{}", v);
}

// Throws if `t` holds a non-finite value; `what` says which tensor it is.
void check_tensor(const at::Tensor& t, int epoch, const std::string& what,
                  const std::string& advice) {
  const at::Tensor bad = at::logical_not(at::isfinite(t.detach())).reshape({-1});
  const int64_t count = bad.sum().item<int64_t>();
  if (count == 0) return;
  const int64_t first = bad.nonzero()[0][0].item<int64_t>();
  const float value = t.detach().reshape({-1})[first].item<float>();
  throw NumericalError(fmt::format(
      "training diverged at epoch {}: {} has {} non-finite value(s) of {} (first at flat index {}: "
      "{}){}",
      epoch, what, count, t.numel(), first, value_text(value), advice));
}

}  // namespace

std::string divergence_advice(bool before_first_step) {
  return before_first_step
             ? "; computed from the initial parameters, before any optimizer step: the "
               "input features are likely too large for float32 arithmetic (scale them down)"
             : "; lower training.lr";
}

void check_finite(const torch::nn::Module& model, double loss, int epoch, bool first_epoch) {
  if (!std::isfinite(loss))
    throw NumericalError(fmt::format("training diverged at epoch {}: the loss is {}{}", epoch,
                                     value_text(loss), divergence_advice(first_epoch)));
  // Gradients first, then values; one flag per tensor, read back together (on a GPU, one
  // synchronisation); the detailed message is worked out only for a failing tensor. The trained
  // tensors are the parameters and the buffers the optimizer steps too (those with a gradient: the
  // learned featureless rows, model/gnn.h).
  std::vector<std::pair<std::string, at::Tensor>> trained;
  for (const auto& item : model.named_parameters())
    trained.emplace_back("parameter '" + item.key() + "'", item.value());
  for (const auto& item : model.named_buffers()) {
    if (item.value().grad().defined())
      trained.emplace_back("trained buffer '" + item.key() + "'", item.value());
  }
  std::vector<at::Tensor> tensors;
  std::vector<std::string> names, advice;
  for (const auto& [name, t] : trained) {
    if (!t.grad().defined()) continue;
    tensors.push_back(t.grad());
    names.push_back("the gradient of " + name);
    advice.push_back(divergence_advice(first_epoch));
  }
  for (const auto& [name, t] : trained) {
    tensors.push_back(t);
    names.push_back(name);
    advice.push_back(divergence_advice(false));
  }
  if (tensors.empty()) return;
  // Zero times a finite value is zero, times an infinity or NaN is NaN: a tensor's sum of its
  // values times zero is NaN exactly when one of them is not finite. Two passes over the values,
  // where isfinite(t).all() takes four (t == t, |t|, != inf, and).
  std::vector<at::Tensor> sums;
  for (const at::Tensor& t : tensors) sums.push_back(t.detach().mul(0).sum());
  const at::Tensor finite = at::isfinite(at::stack(sums)).to(at::kCPU);
  const bool* ok = finite.data_ptr<bool>();
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (!ok[k]) check_tensor(tensors[k], epoch, names[k], advice[k]);
  }
}

}  // namespace adaqp
