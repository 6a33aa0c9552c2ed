#include "adaqp/common/append_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

AppendFile::AppendFile(std::string path, bool truncate) : path_(std::move(path)) {
  const int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0)
    throw InputError(path_, "", std::string("cannot open for writing: ") + std::strerror(errno));
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

AppendFile::AppendFile(AppendFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AppendFile& AppendFile::operator=(AppendFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void AppendFile::write(std::string_view text) {
  if (fd_ < 0) throw InvariantError("AppendFile::write on a file not open");
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw InputError(path_, "",
                       std::string("write failed: ") + (n < 0 ? std::strerror(errno) : "no space"));
    text.remove_prefix(static_cast<size_t>(n));
  }
  // Removed under the job (its directory deleted), the file takes records nobody will read.
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_nlink == 0)
    throw InputError(path_, "", "removed while the job wrote it (was its directory deleted?)");
}

}  // namespace adaqp
