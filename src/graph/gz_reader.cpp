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
constexpr size_t kInputBuffer = size_t{1} << 18;
// inflate's window bits for gzip alone (16 + the largest window): a zlib or raw stream is an error.
constexpr int kGzipWindowBits = 16 + 15;

}  // namespace

GzLineReader::GzLineReader(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path_, ec)) {
    const bool there = std::filesystem::exists(path_, ec);
    throw InputError(path_, "", there ? "is not a regular file" : "file not found");
  }
  file_.reset(std::fopen(path_.c_str(), "rb"));
  if (!file_) throw InputError(path_, "", std::string("cannot open: ") + strerror(errno));
  buffer_.resize(kInitialBuffer);
  in_.reserve(kInputBuffer);
  // An empty file is an empty text; anything else starts with gzip's magic bytes.
  while (in_.size() < 2 && read_input()) {
  }
  if (!in_.empty() && (in_[0] != 0x1f || (in_.size() > 1 && in_[1] != 0x8b)))
    throw InputError(path_, "", "not a gzip file");
  if (in_.empty()) member_end_ = true;
  // Last: the destructor, which ends the inflate state, runs only for a constructed reader.
  if (inflateInit2(&zs_, kGzipWindowBits) != Z_OK)
    throw InvariantError("inflateInit2 failed for " + path_);
  zs_.next_in = in_.data();
  zs_.avail_in = static_cast<uInt>(in_.size());
}

GzLineReader::~GzLineReader() {
  inflateEnd(&zs_);
}

void GzLineReader::fail(const std::string& what) const {
  throw InputError(path_, "after line " + std::to_string(line_number_), what);
}

bool GzLineReader::read_input() {
  if (input_end_) return false;
  const size_t unread = zs_.avail_in;
  std::memmove(in_.data(), zs_.next_in == nullptr ? in_.data() : zs_.next_in, unread);
  in_.resize(kInputBuffer);
  const size_t n = std::fread(in_.data() + unread, 1, kInputBuffer - unread, file_.get());
  if (n == 0 && std::ferror(file_.get())) fail(std::string("read failed: ") + strerror(errno));
  input_end_ = n == 0;
  in_.resize(unread + n);
  zs_.next_in = in_.data();
  zs_.avail_in = static_cast<uInt>(in_.size());
  return n > 0;
}

bool GzLineReader::next_member() {
  for (;;) {
    while (zs_.avail_in > 0 && *zs_.next_in == 0) {
      ++zs_.next_in;
      --zs_.avail_in;
    }
    if (zs_.avail_in == 0 && !read_input()) return false;
    if (*zs_.next_in == 0) continue;
    if (zs_.avail_in < 2 && read_input()) continue;
    if (zs_.avail_in < 2 || zs_.next_in[0] != 0x1f || zs_.next_in[1] != 0x8b)
      fail("bytes after the end of the gzip data are not gzip (a damaged or foreign member)");
    inflateReset(&zs_);
    member_end_ = false;
    return true;
  }
}

bool GzLineReader::fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);
  const size_t room = std::min<size_t>(buffer_.size() - end_, std::numeric_limits<uInt>::max());
  for (;;) {
    if (member_end_ && !next_member()) return false;
    if (zs_.avail_in == 0) read_input();
    zs_.next_out = reinterpret_cast<Bytef*>(buffer_.data() + end_);
    zs_.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    const size_t produced = room - zs_.avail_out;
    end_ += produced;
    if (rc == Z_STREAM_END) {
      member_end_ = true;
    } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && input_end_) {
      // The file ends inside a member. What came before the cut was returned by the calls before
      // this one, which yields nothing: the error names the last whole line.
      fail("truncated gzip data (unexpected end of file)");
    } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && zs_.avail_in == 0)) {
      fail(std::string("corrupt gzip data (") + (zs_.msg != nullptr ? zs_.msg : "inflate failed") +
           ")");
    }
    if (produced > 0) return true;
  }
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
