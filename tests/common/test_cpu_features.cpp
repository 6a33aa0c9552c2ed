#include "adaqp/common/cpu_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace adaqp {
namespace {

// The flags of the first processor in /proc/cpuinfo, space-separated with a space at each end;
// empty where there is no such file or line.
std::string cpuinfo_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) return " " + line.substr(line.find(':') + 1) + " ";
  }
  return "";
}

// What the kernel says the CPU has, against what the compiler's probe says.
TEST(CpuIsa, SupportIsWhatTheKernelReports) {
  const std::string flags = cpuinfo_flags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  EXPECT_TRUE(cpu_supports(CpuIsa::kScalar));
#if ADAQP_X86_PATHS
  EXPECT_EQ(cpu_supports(CpuIsa::kAvx2), flags.find(" avx2 ") != std::string::npos);
  bool avx512 = true;
  for (const char* subset : {" avx512f ", " avx512bw ", " avx512cd ", " avx512dq ", " avx512vl "})
    avx512 = avx512 && flags.find(subset) != std::string::npos;
  EXPECT_EQ(cpu_supports(CpuIsa::kAvx512), avx512);
#else
  EXPECT_FALSE(cpu_supports(CpuIsa::kAvx2));
  EXPECT_FALSE(cpu_supports(CpuIsa::kAvx512));
#endif
}

// The path in use is the widest the CPU supports, at most ADAQP_MAX_CPU_ISA where the process has
// it (tests/CMakeLists.txt runs this suite again under each cap).
TEST(CpuIsa, IsTheWidestSupportedUnderTheCap) {
  CpuIsa want = CpuIsa::kScalar;
  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (cpu_supports(isa)) want = isa;
  if (const char* cap = std::getenv("ADAQP_MAX_CPU_ISA")) {
    const std::string name(cap);
    ASSERT_TRUE(name == "scalar" || name == "avx2" || name == "avx512") << name;
    const CpuIsa limit = name == "scalar" ? CpuIsa::kScalar
                         : name == "avx2" ? CpuIsa::kAvx2
                                          : CpuIsa::kAvx512;
    want = std::min(want, limit);
  }
  EXPECT_EQ(cpu_isa_name(cpu_isa()), std::string(cpu_isa_name(want)));
}

TEST(CpuIsa, NamesAreTheVariablesValues) {
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kScalar), "scalar");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kAvx2), "avx2");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kAvx512), "avx512");
}

}  // namespace
}  // namespace adaqp
