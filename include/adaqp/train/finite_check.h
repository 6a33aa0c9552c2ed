// Divergence detection: training stops at the first non-finite loss, gradient or parameter, before
// anything of that epoch is checkpointed, so the last checkpoint stays the last good state.
#pragma once

namespace torch::nn {
class Module;
}

namespace adaqp {

// Throws NumericalError if `loss`, any parameter's gradient or any parameter of `model` is NaN or
// infinite, checked in that order. The message names the epoch, the parameter (in registration
// order, the first one affected), how many values are non-finite and the first of them.
// Call it after the step of `epoch`: gradients are kept until the next step's zero_grad.
void check_finite(const torch::nn::Module& model, double loss, int epoch);

}  // namespace adaqp
