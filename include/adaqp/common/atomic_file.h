// A file written under a temporary name (<path>.tmp-<pid>), synced and renamed into place by
// commit(): a reader never sees it half-written, and a process killed on the way leaves only the
// temporary file. Not committed, it is removed. Errors are InputErrors naming the file.
#pragma once

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

}  // namespace adaqp
