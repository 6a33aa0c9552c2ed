// Rank 0's hold on output.dir for the whole run: a POSIX record lock on <output.dir>/.adaqp.lock,
// which the kernel releases when the process ends however it ends (and which NFS honours). A second
// job writing into the same directory (a requeued job whose first run still lives, a copied
// command) stops with an error instead of interleaving its metrics, parameters and checkpoints
// with this run's.
#pragma once

#include <string>

namespace adaqp::cli {

class OutputLock {
 public:
  // Locks `dir` (which exists); ConfigError naming output.dir and the holder when another process
  // holds it, InputError when the lock file cannot be made.
  explicit OutputLock(const std::string& dir);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  static constexpr const char* kFileName = ".adaqp.lock";

 private:
  int fd_ = -1;
};

}  // namespace adaqp::cli
