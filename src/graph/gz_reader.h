// Streaming line reader over a gzip-compressed text file (zlib), for the OGB raw layout.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace adaqp {

// Reads a .gz file line by line without copying lines: each view stays valid until the next call.
// A missing or unreadable file, a file that is not gzip, and truncated or corrupt compressed data
// throw InputError naming the file (and the line reached, for errors in the middle).
class GzLineReader {
 public:
  explicit GzLineReader(std::string path);

  // Sets `line` to the next line without its "\n" (and "\r"); false at the end of the file. A
  // final newline does not start another line.
  bool next(std::string_view& line);
  // 1-based number of the line last returned by next().
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  // Appends decompressed data after the unread tail; false when the file has no more data.
  bool fill();

  struct Closer {
    void operator()(gzFile_s* file) const { gzclose(file); }
  };

  std::string path_;
  std::unique_ptr<gzFile_s, Closer> file_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // first unread byte in buffer_
  size_t end_ = 0;    // one past the last valid byte in buffer_
  bool eof_ = false;
  int64_t line_number_ = 0;
};

}  // namespace adaqp
