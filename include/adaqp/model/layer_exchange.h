// What a model layer exchanges with its peers in a training epoch (GnnImpl::exchange): kept apart
// from the model so that the trainer's interface needs no libtorch header for it.
#pragma once

#include <cstdint>

namespace adaqp {

// The halo exchanges of one layer in a training epoch: the boundary's sent rows forward, `width`
// floats each, and, with `backward`, the gradients of the received rows back. Layer 0 exchanges
// the input features' rows (`features`: no gradient flows back to them, and with the feature cache
// they travel once, at start-up); a later layer the narrower of its input and output rows, both
// ways.
struct LayerExchange {
  int64_t width = 0;
  bool features = false;
  bool backward = false;
};

}  // namespace adaqp
