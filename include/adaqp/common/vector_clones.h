// Hot CPU loops compiled for AVX-512 (x86-64-v4: F, BW, CD, DQ and VL, whose byte and word
// operations the quantizer's narrowing needs), AVX2 and the baseline, so that one portable binary
// still vectorises on the machine it runs on. The widest that cpu_isa() allows runs: the same
// choice, capped by ADAQP_MAX_CPU_ISA, as the hand-written paths'. No floating multiply is followed
// by an add in these loops, so the FMA that x86-64-v4 brings changes no result.
//
// A loop is written once, as the always-inline function NAME_body (ADAQP_CLONED_BODY);
// ADAQP_VECTOR_CLONES(RET, NAME, PARAMS, ARGS) then defines RET NAME PARAMS over two copies of it
// compiled for AVX-512 and AVX2 (a body inlined into a function of a wider target is compiled for
// that target) and the baseline's. Not target_clones: its resolver asks the CPU, not the cap.
#pragma once

#include "adaqp/common/cpu_features.h"

#if ADAQP_X86_PATHS
#define ADAQP_CLONED_BODY inline __attribute__((always_inline))
#define ADAQP_VECTOR_CLONES(ret, name, params, args)                   \
  __attribute__((target("arch=x86-64-v4"))) ret name##_avx512 params { \
    return name##_body args;                                           \
  }                                                                    \
  __attribute__((target("avx2"))) ret name##_avx2 params {             \
    return name##_body args;                                           \
  }                                                                    \
  ret name params {                                                    \
    switch (::adaqp::cpu_isa()) {                                      \
      case ::adaqp::CpuIsa::kAvx512:                                   \
        return name##_avx512 args;                                     \
      case ::adaqp::CpuIsa::kAvx2:                                     \
        return name##_avx2 args;                                       \
      case ::adaqp::CpuIsa::kScalar:                                   \
        break;                                                         \
    }                                                                  \
    return name##_body args;                                           \
  }
#else
#define ADAQP_CLONED_BODY inline
#define ADAQP_VECTOR_CLONES(ret, name, params, args) \
  ret name params {                                  \
    return name##_body args;                         \
  }
#endif
