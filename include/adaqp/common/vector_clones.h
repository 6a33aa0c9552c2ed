// Hot CPU loops compiled for AVX-512, AVX2 and the baseline, the best picked at load time, so one
// portable binary still vectorises on the machine it runs on.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define ADAQP_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ADAQP_VECTOR_CLONES
#endif
