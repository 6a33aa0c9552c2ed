#include "adaqp/common/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temp_(temp_path(path_)) {
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

std::string temp_path(const std::string& path, pid_t pid) {
  return path + AtomicFile::kTempInfix + std::to_string(pid > 0 ? pid : ::getpid());
}

int remove_stale_temporaries(const std::string& folder, const std::string& prefix) {
  namespace fs = std::filesystem;
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder.empty() ? "." : folder, ec)) {
    const std::string name = e.path().filename().string();
    const size_t at = name.rfind(AtomicFile::kTempInfix);
    if (at == std::string::npos || name.rfind(prefix, 0) != 0) continue;
    const char* digits = name.c_str() + at + std::strlen(AtomicFile::kTempInfix);
    char* end = nullptr;
    const long pid = std::strtol(digits, &end, 10);
    if (end == digits || *end != '\0' || pid <= 0) continue;
    // This process's pid counts as stale: in a restarted container a new process often gets the
    // pid of the killed one, and a caller removes temporaries before it writes any.
    const bool alive = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
    if (alive && pid != ::getpid()) continue;
    std::error_code rm;
    if (fs::remove_all(e.path(), rm) > 0 && !rm) {
      ++removed;
      spdlog::info("removed {}: left by a process {} that stopped while writing it",
                   e.path().string(), pid);
    }
  }
  return removed;
}

}  // namespace adaqp
