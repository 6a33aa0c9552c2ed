#include "adaqp/common/memory.h"

#include <cstdio>
#include <cstring>

#include "adaqp/common/c_file.h"

namespace adaqp {
namespace {

// A "<field>:   <n> kB" line of /proc/self/status, in bytes.
int64_t status_kb(const char* field) {
  const CFile f(std::fopen("/proc/self/status", "r"));
  if (!f) return 0;
  char line[256];
  int64_t bytes = 0;
  const size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f.get()) != nullptr) {
    long long kb = 0;
    if (std::strncmp(line, field, len) == 0 && line[len] == ':' &&
        std::sscanf(line + len + 1, "%lld", &kb) == 1) {
      bytes = static_cast<int64_t>(kb) * 1024;
      break;
    }
  }
  return bytes;
}

}  // namespace

int64_t peak_rss_bytes() {
  return status_kb("VmHWM");
}

bool reset_peak_rss() {
  CFile f(std::fopen("/proc/self/clear_refs", "w"));
  if (!f) return false;
  const bool written = std::fputs("5", f.get()) >= 0;
  return std::fclose(f.release()) == 0 && written;
}

}  // namespace adaqp
