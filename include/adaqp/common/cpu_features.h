// What the running CPU offers, asked once. The hand-vectorised loops (the codec's rounding and
// unpacking, Philox, the CSR product) pick their widest path at run time, so one portable binary
// uses the vector units of the machine it runs on.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define ADAQP_X86_PATHS 1
#endif

namespace adaqp {

#if ADAQP_X86_PATHS
bool cpu_has_avx2();
bool cpu_has_avx512f();
#endif

}  // namespace adaqp
