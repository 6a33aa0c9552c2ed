// Skips a test where no CUDA device is visible, saying what the CUDA runtime reported (a driver
// older than the build's runtime would otherwise read as "no GPU"). Only in CUDA builds.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "adaqp/kernels/cuda_device.h"

#define ADAQP_REQUIRE_CUDA_DEVICE()                                      \
  if (std::string why_; ::adaqp::kernels::cuda_device_count(&why_) == 0) \
  GTEST_SKIP() << "no CUDA device visible (" << why_ << ")"
