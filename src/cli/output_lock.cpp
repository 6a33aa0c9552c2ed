#include "output_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "adaqp/comm/host_of.h"
#include "adaqp/common/error.h"

namespace adaqp::cli {
namespace {

// The holder as its lock file names it ("<pid> <host>"), else as the kernel does.
std::string holder_of(int fd) {
  std::array<char, 512> text{};
  const ssize_t n = ::pread(fd, text.data(), text.size() - 1, 0);
  std::string line(text.data(), n > 0 ? static_cast<size_t>(n) : 0);
  line = line.substr(0, line.find('\n'));
  const size_t space = line.find(' ');
  if (space != std::string::npos && space > 0)
    return fmt::format("process {} on host {}", line.substr(0, space), line.substr(space + 1));
  struct flock holder {};
  holder.l_type = F_WRLCK;
  holder.l_whence = SEEK_SET;
  if (::fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK && holder.l_pid > 0)
    return fmt::format("process {}", holder.l_pid);
  return "a process";
}

}  // namespace

OutputLock::OutputLock(const std::string& dir, const std::string& key) {
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError(path, "",
                     std::string("cannot create the run's lock: ") + std::strerror(errno));
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &lock) == 0) {
    // Who holds it, for the message of a job it stops (the kernel's pid is meaningless across
    // the hosts of a shared file system).
    const std::string holder = fmt::format("{} {}\n", ::getpid(), host_name());
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, holder.data(), holder.size(), 0) < 0)
      spdlog::debug("{}: could not record the lock's holder: {}", path, std::strerror(errno));
    return;
  }
  const int err = errno;
  const std::string holder = err == EACCES || err == EAGAIN ? holder_of(fd_) : "";
  ::close(fd_);
  fd_ = -1;
  if (holder.empty()) {
    // A file system without record locks (some NFS and Lustre mounts): run unguarded.
    spdlog::warn("{}: cannot lock ({}): nothing stops a second job from writing into {} meanwhile",
                 path, std::strerror(err), dir);
    return;
  }
  throw ConfigError(fmt::format(
      "{} = {}: another job is writing into it ({} holds {}); wait for it to end, or choose "
      "another {}",
      key, dir, holder, path, key));
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace adaqp::cli
