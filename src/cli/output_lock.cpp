#include "output_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "adaqp/common/error.h"

namespace adaqp::cli {

OutputLock::OutputLock(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError(path, "",
                     std::string("cannot create the run's lock: ") + std::strerror(errno));
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &lock) == 0) return;
  const int err = errno;
  struct flock holder {};
  holder.l_type = F_WRLCK;
  holder.l_whence = SEEK_SET;
  const bool known = ::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
  ::close(fd_);
  fd_ = -1;
  if (err != EACCES && err != EAGAIN)
    throw InputError(path, "", std::string("cannot lock: ") + std::strerror(err));
  throw ConfigError(fmt::format(
      "output.dir = {}: another job is writing into it ({} holds {}); wait for it to end, or "
      "choose another output.dir",
      dir, known ? fmt::format("process {}", holder.l_pid) : std::string("a process"), path));
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace adaqp::cli
