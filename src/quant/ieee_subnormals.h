// IEEE subnormals on the calling thread for a scope. The codec's formulas (quant_math.h) are
// defined on IEEE arithmetic, subnormals included, and the CUDA codec computes them so: a thread
// whose MXCSR flushes subnormal results to zero (FTZ) or reads subnormal inputs as zero (DAZ), bits
// that a library built with -ffast-math sets as it loads, would store a step of 0 for a row of
// subnormal range and decode other values than the GPU. Each thread of the codec's parallel
// regions clears both bits for the region and restores them after; where they are clear already
// (the usual case) it writes nothing. Other architectures: no change (their flush-to-zero modes are
// not set by this project, and not checked).
#pragma once

#include "adaqp/common/cpu_features.h"

#if ADAQP_X86_PATHS
#include <xmmintrin.h>
#endif

namespace adaqp::quant::detail {

class IeeeSubnormals {
 public:
#if ADAQP_X86_PATHS
  IeeeSubnormals() : saved_(_mm_getcsr()) {
    if ((saved_ & kFlushBits) != 0) _mm_setcsr(saved_ & ~kFlushBits);
  }
  ~IeeeSubnormals() {
    if ((saved_ & kFlushBits) != 0) _mm_setcsr(saved_);
  }
#else
  IeeeSubnormals() = default;
#endif
  IeeeSubnormals(const IeeeSubnormals&) = delete;
  IeeeSubnormals& operator=(const IeeeSubnormals&) = delete;

 private:
#if ADAQP_X86_PATHS
  static constexpr unsigned kFlushBits = 0x8040u;  // FTZ (bit 15) and DAZ (bit 6)
  unsigned saved_;
#endif
};

}  // namespace adaqp::quant::detail
