#include "adaqp/common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temp_(path_ + kTempInfix + std::to_string(::getpid())) {
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(temp_, "", std::string("cannot create: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(temp_, "", std::string("write failed: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  const bool synced = ::fsync(fd_) == 0;
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  if (!synced || !closed)
    throw InputError(temp_, "", std::string("sync failed: ") + std::strerror(errno));
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    throw InputError(path_, "", std::string("cannot rename into place: ") + std::strerror(errno));
  committed_ = true;
}

void AtomicFile::write_text(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text.data(), text.size());
  f.commit();
}

}  // namespace adaqp
