// Divergence detection: training stops at the first non-finite loss, gradient or parameter, before
// anything of that epoch is checkpointed, so the last checkpoint stays the last good state.
#pragma once

#include <string>

namespace torch::nn {
class Module;
}

namespace adaqp {

// The advice that ends a divergence error. Values computed before any optimizer step
// (`before_first_step`: the loss and gradients of a fresh run's first epoch, from the initial
// parameters) come from the input, not the learning rate.
std::string divergence_advice(bool before_first_step);

// Throws NumericalError if `loss`, any trained tensor's gradient or any trained tensor of `model`
// is NaN or infinite, checked in that order; the trained tensors are the parameters, then the
// buffers with a gradient (the optimizer steps them too: the learned featureless rows, which differ
// between ranks, so that this rank alone may throw). The message names the epoch, the tensor (in
// registration order, the first one affected), how many values are non-finite and the first of
// them, and ends with divergence_advice (a value's: after a step, always the learning rate's).
// Call it after the step of `epoch`: gradients are kept until the next step's zero_grad.
// `first_epoch`: `epoch` is the first of a run started afresh (not resumed from a checkpoint).
void check_finite(const torch::nn::Module& model, double loss, int epoch, bool first_epoch);

}  // namespace adaqp
