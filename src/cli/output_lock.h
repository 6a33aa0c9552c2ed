// Rank 0's hold on a directory it writes into for the whole run (output.dir, and a
// training.checkpoint_dir outside it): a POSIX record lock on <dir>/.adaqp.lock (which records
// "<pid> <host>" of its holder), released by the kernel when the process ends however it ends, and
// honoured by NFS. A second job writing into the same directory (a requeued job whose first run
// still lives, a copied command, two jobs given one checkpoint directory) stops with an error
// instead of interleaving its partition, metrics, parameters and checkpoints with this run's, or
// pruning them. On a file system without record locks the run goes on unguarded, with a warning.
#pragma once

#include <string>

namespace adaqp::cli {

class OutputLock {
 public:
  // Locks `dir` (which exists); ConfigError naming `key` (the configuration key that chose `dir`)
  // and the holder when another process holds it, InputError when the lock file cannot be made.
  OutputLock(const std::string& dir, const std::string& key);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  static constexpr const char* kFileName = ".adaqp.lock";

 private:
  int fd_ = -1;
};

}  // namespace adaqp::cli
