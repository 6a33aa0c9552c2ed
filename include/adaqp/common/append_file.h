// A file that grows by appending (metrics.jsonl): each write goes to the system at once, and one
// that fails is an InputError naming the file and the system's reason (a full disk, a file made
// read-only), or that the file was removed (its directory deleted), so a job stops at the first
// record it could not keep. A write cut short leaves a
// last line without its newline, which readers of such files drop.
#pragma once

#include <string>
#include <string_view>

namespace adaqp {

class AppendFile {
 public:
  AppendFile() = default;
  // Opens `path` for appending, emptied first when `truncate`; InputError if it cannot.
  AppendFile(std::string path, bool truncate);
  ~AppendFile();
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  void write(std::string_view text);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace adaqp
