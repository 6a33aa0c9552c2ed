// Files and folders written under a temporary name (<path>.tmp-<pid>) and renamed into place, so a
// reader never sees them half-written and a process killed on the way leaves only the temporary.
// AtomicFile is one such file: synced and renamed by commit(); not committed, it is removed.
// Errors are InputErrors naming the file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace adaqp {

class AtomicFile {
 public:
  // The infix of the temporary names, before the writer's pid.
  static constexpr const char* kTempInfix = ".tmp-";

  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t bytes);
  void commit();

  // Writes `text` to `path` this way.
  static void write_text(const std::string& path, const std::string& text);

 private:
  std::string path_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

// The temporary name of `path` for the process `pid` (default: this one).
std::string temp_path(const std::string& path, pid_t pid = 0);

// Removes the temporaries in `folder` whose name starts with `prefix` and whose writer is no
// other live process of this host (killed while writing; a live writer's are kept), logging each;
// returns how many it removed. Call it before this process writes temporaries there. Files and
// folders alike; errors are ignored (a temporary that stays harms nothing).
int remove_stale_temporaries(const std::string& folder, const std::string& prefix = "");

}  // namespace adaqp
