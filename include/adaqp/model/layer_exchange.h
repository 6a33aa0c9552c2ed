// What a model layer exchanges with its peers in a training epoch (GnnImpl::exchange): kept apart
// from the model so that the trainer's interface needs no libtorch header for it.
#pragma once

#include <cstdint>

namespace adaqp {

// The halo exchanges of one layer in a training epoch: the boundary's sent rows forward, `width`
// floats each, and, with `backward`, the gradients of the received rows back. `features`: the rows
// are the input features themselves (layer 0 of GCN and GraphSAGE: no gradient flows back to them,
// and with the feature cache they travel once, at start-up). Each layer type says what it
// exchanges (conv.h).
struct LayerExchange {
  int64_t width = 0;
  bool features = false;
  bool backward = false;
  // The rows travelled once, at start-up (the feature cache): nothing of this layer per epoch.
  bool cached = false;
};

}  // namespace adaqp
