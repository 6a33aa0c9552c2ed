// What the running CPU offers, asked once. The hand-vectorised loops (the codec's rounding and
// unpacking, Philox, the CSR product) and the compiled ones of vector_clones.h pick their widest
// path at run time, so one portable binary uses the vector units of the machine it runs on.
// ADAQP_MAX_CPU_ISA caps that choice, as oneDNN's ONEDNN_MAX_CPU_ISA does: to run the narrower
// paths on a wide CPU (the tests run the scalar ones so on every host), or to measure what a path
// is worth.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define ADAQP_X86_PATHS 1
#endif

namespace adaqp {

// The instruction sets the vectorised paths are written for, narrowest first.
enum class CpuIsa { kScalar, kAvx2, kAvx512 };

// "scalar", "avx2", "avx512": the names ADAQP_MAX_CPU_ISA takes.
const char* cpu_isa_name(CpuIsa isa);

// Whether this CPU has `isa` (AVX-512: the subsets of x86-64-v4, F, BW, CD, DQ and VL), whatever
// the cap: what a test calling one path directly needs.
bool cpu_supports(CpuIsa isa);

// The widest path this process uses: the widest the CPU supports, at most ADAQP_MAX_CPU_ISA when
// that is set. ConfigError naming the variable and its value when it is not one of the names.
CpuIsa cpu_isa();

}  // namespace adaqp
