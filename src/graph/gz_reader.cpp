#include "gz_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

// Grows (doubling) only while one line outgrows it. Small: a loader opens one reader per file, and
// a dataset can have many small ones (a heterogeneous graph's per-relation files; the fuzz
// replays).
constexpr size_t kInitialBuffer = size_t{1} << 16;
constexpr unsigned kZlibBuffer = 1u << 18;

// zlib's message for the file's current error, without the "<path>: " prefix zlib adds.
std::string zlib_message(gzFile file, const std::string& path, int* errnum) {
  std::string msg = gzerror(file, errnum);
  const std::string prefix = path + ": ";
  if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
  return msg;
}

}  // namespace

GzLineReader::GzLineReader(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path_, ec)) {
    const bool there = std::filesystem::exists(path_, ec);
    throw InputError(path_, "", there ? "is not a regular file" : "file not found");
  }
  buffer_.resize(kInitialBuffer);
  file_.reset(gzopen(path_.c_str(), "rb"));
  if (!file_) throw InputError(path_, "", std::string("cannot open: ") + strerror(errno));
  if (gzbuffer(file_.get(), kZlibBuffer) != 0) throw InvariantError("gzbuffer failed for " + path_);
  if (gzdirect(file_.get()) != 0) throw InputError(path_, "", "not a gzip file");
}

bool GzLineReader::fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const size_t room = std::min<size_t>(buffer_.size() - end_, std::numeric_limits<int>::max());
  const int n = gzread(file_.get(), buffer_.data() + end_, static_cast<unsigned>(room));
  int errnum = Z_OK;
  const std::string msg = zlib_message(file_.get(), path_, &errnum);
  // A stream cut short (Z_BUF_ERROR) still yields what zlib decompressed before the cut, over
  // as many reads as it takes: the error comes with the read that yields nothing, so that it names
  // the last whole line.
  const bool cut_with_data = n > 0 && errnum == Z_BUF_ERROR;
  if (!cut_with_data && (n < 0 || errnum != Z_OK)) {
    const std::string where = "after line " + std::to_string(line_number_);
    if (errnum == Z_BUF_ERROR) throw InputError(path_, where, "truncated gzip data (" + msg + ")");
    if (errnum == Z_ERRNO)
      throw InputError(path_, where, std::string("read failed: ") + strerror(errno));
    throw InputError(path_, where, "corrupt gzip data (" + msg + ")");
  }
  end_ += static_cast<size_t>(n);
  return n > 0;
}

bool GzLineReader::next(std::string_view& line) {
  size_t line_begin = 0;
  size_t length = 0;
  while (true) {
    const char* start = buffer_.data() + begin_;
    if (const void* newline = std::memchr(start, '\n', end_ - begin_)) {
      line_begin = begin_;
      length = static_cast<size_t>(static_cast<const char*>(newline) - start);
      begin_ += length + 1;
      break;
    }
    if (!eof_ && fill()) continue;
    eof_ = true;
    if (begin_ == end_) return false;
    line_begin = begin_;
    length = end_ - begin_;
    begin_ = end_;
    break;
  }
  const char* start = buffer_.data() + line_begin;
  if (length > 0 && start[length - 1] == '\r') --length;
  line = std::string_view(start, length);
  ++line_number_;
  return true;
}

}  // namespace adaqp
