// Whether the calling thread computes with IEEE subnormals: false where it flushes subnormal
// results to zero or reads subnormal inputs as zero (the MXCSR's FTZ or DAZ bits on x86).
// Libraries built with -ffast-math turn these bits on as they load; the CPU codec clears them for
// its own calls (src/quant/ieee_subnormals.h), the rest of the CPU's arithmetic does not. The
// report names the control register and each operation's result, for a failure on a machine not at
// hand.
#pragma once

#include <cstdio>
#include <limits>
#include <string>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace adaqp::test {

inline std::string subnormal_report() {
  const float min = std::numeric_limits<float>::denorm_min();
  volatile float a = min, b = 3.0e-39f, zero = 0.0f, three = 3.0f;
  const float twice = a * 2.0f, third = b / three, kept = zero - (-a), sum = a + zero;
  const bool nonzero = a != zero;
  char text[200];
#if defined(__x86_64__)
  const unsigned csr = _mm_getcsr();
  std::snprintf(text, sizeof(text), "MXCSR 0x%04x (FTZ %d, DAZ %d): ", csr, (csr >> 15) & 1,
                (csr >> 6) & 1);
#else
  text[0] = '\0';
#endif
  std::string report = text;
  std::snprintf(text, sizeof(text),
                "2*min %g (want %g), 3e-39/3 %g (want %g), 0-(-min) %g, min+0 %g, min != 0 %d",
                static_cast<double>(twice), 2.0 * min, static_cast<double>(third), 1.0e-39,
                static_cast<double>(kept), static_cast<double>(sum), nonzero ? 1 : 0);
  return report + text;
}

inline bool subnormals_kept() {
  const float min = std::numeric_limits<float>::denorm_min();
  volatile float a = min, b = 3.0e-39f, zero = 0.0f, three = 3.0f;
  const float twice = a * 2.0f, third = b / three;
  return twice == 2.0f * min && third == 1.0e-39f && a + zero == min && a != zero;
}

}  // namespace adaqp::test
