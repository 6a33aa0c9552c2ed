// Hot CPU loops compiled for AVX-512 (x86-64-v4: F, BW, DQ and VL, whose byte and word operations
// the quantizer's narrowing needs), AVX2 and the baseline, the best picked at load time, so one
// portable binary still vectorises on the machine it runs on. No floating multiply is followed by
// an add in these loops, so the FMA that x86-64-v4 brings changes no result.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define ADAQP_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define ADAQP_VECTOR_CLONES
#endif
