// Waiting for the work enqueued on a device: a no-op on the CPU (its kernels return when done); on
// CUDA, until every kernel and copy enqueued so far on the device has completed. A build without
// CUDA refuses a CUDA device.
#pragma once

#include "adaqp/common/device.h"

namespace adaqp::kernels {

void synchronize(const Device& device);

}  // namespace adaqp::kernels
