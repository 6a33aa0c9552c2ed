#include "adaqp/common/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

constexpr CpuIsa kIsas[] = {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512};

CpuIsa widest_supported() {
  CpuIsa widest = CpuIsa::kScalar;
  for (CpuIsa isa : kIsas)
    if (cpu_supports(isa)) widest = isa;
  return widest;
}

// The cap of ADAQP_MAX_CPU_ISA; the widest there is when unset.
CpuIsa cap_from_environment() {
  const char* value = std::getenv("ADAQP_MAX_CPU_ISA");
  if (value == nullptr) return CpuIsa::kAvx512;
  for (CpuIsa isa : kIsas)
    if (std::string(value) == cpu_isa_name(isa)) return isa;
  throw ConfigError("environment variable ADAQP_MAX_CPU_ISA = '" + std::string(value) +
                    "': not one of scalar, avx2, avx512");
}

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kScalar:
      break;
  }
  return "scalar";
}

bool cpu_supports(CpuIsa isa) {
#if ADAQP_X86_PATHS
  static const bool avx2 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  // x86-64-v4's AVX-512 subsets, which the compiled loops' AVX-512 copies (vector_clones.h) use.
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl");
  }();
  switch (isa) {
    case CpuIsa::kAvx2:
      return avx2;
    case CpuIsa::kAvx512:
      return avx512;
    case CpuIsa::kScalar:
      break;
  }
  return true;
#else
  return isa == CpuIsa::kScalar;
#endif
}

CpuIsa cpu_isa() {
  // Read once (a throw leaves it unset: the next call reports the same error).
  static const CpuIsa isa = std::min(widest_supported(), cap_from_environment());
  return isa;
}

}  // namespace adaqp
