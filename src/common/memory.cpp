#include "adaqp/common/memory.h"

#include <cstdio>
#include <cstring>

namespace adaqp {
namespace {

// A "<field>:   <n> kB" line of /proc/self/status, in bytes.
int64_t status_kb(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  int64_t bytes = 0;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long kb = 0;
    if (std::strncmp(line, field, len) == 0 && line[len] == ':' &&
        std::sscanf(line + len + 1, "%lld", &kb) == 1) {
      bytes = static_cast<int64_t>(kb) * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

}  // namespace

int64_t peak_rss_bytes() {
  return status_kb("VmHWM");
}

bool reset_peak_rss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool written = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && written;
}

}  // namespace adaqp
