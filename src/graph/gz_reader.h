// Streaming line reader over a gzip-compressed text file (zlib), for the OGB raw layout.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace adaqp {

// Reads a .gz file line by line without copying lines: each view stays valid until the next call.
// A file of several gzip members (concatenated .gz files) reads as their concatenation; zero bytes
// after the last one are padding. A missing or unreadable file, a file that is not gzip, truncated
// or corrupt compressed data (each member's CRC-32 and length checked), and anything else after a
// member throw InputError naming the file (and the line reached, for errors in the middle).
class GzLineReader {
 public:
  explicit GzLineReader(std::string path);
  ~GzLineReader();
  GzLineReader(const GzLineReader&) = delete;
  GzLineReader& operator=(const GzLineReader&) = delete;

  // Sets `line` to the next line without its "\n" (and "\r"); false at the end of the file. A
  // final newline does not start another line.
  bool next(std::string_view& line);
  // 1-based number of the line last returned by next().
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  // Appends decompressed data after the unread tail; false when the file has no more data.
  bool fill();
  // Reads more compressed bytes into in_ (keeping the unread ones); false at the file's end.
  bool read_input();
  // After a member's end: true where another member starts (its inflate state reset), false where
  // only zero bytes, or nothing, follow.
  bool next_member();
  [[noreturn]] void fail(const std::string& what) const;

  struct Closer {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };

  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  z_stream zs_{};
  std::vector<unsigned char> in_;  // compressed bytes; zs_ reads from it
  bool input_end_ = false;         // file_ has no more bytes
  bool member_end_ = false;        // zs_ reached the end of a member
  std::vector<char> buffer_;
  size_t begin_ = 0;  // first unread byte in buffer_
  size_t end_ = 0;    // one past the last valid byte in buffer_
  bool eof_ = false;
  int64_t line_number_ = 0;
};

}  // namespace adaqp
