#include "adaqp/graph/npy.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>

#include "adaqp/common/c_file.h"
#include "adaqp/common/error.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the .npy code assumes a little-endian host");

namespace adaqp {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kHeaderAlignment = 64;
// The widest '|S<n>' accepted: byte strings here are short tags such as b'csr'.
constexpr size_t kMaxBytesWidth = 1 << 16;

constexpr NpyDtype kAllDtypes[] = {NpyDtype::kInt32,   NpyDtype::kInt64,   NpyDtype::kFloat16,
                                   NpyDtype::kFloat32, NpyDtype::kFloat64, NpyDtype::kUInt8,
                                   NpyDtype::kBool};

// The header's Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3,), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{');
    while (!accept('}')) {
      const std::string key = parse_string();
      expect(':');
      if (key == "descr") {
        descr = parse_string();
        seen_descr = true;
      } else if (key == "fortran_order") {
        fortran = parse_bool();
        seen_fortran = true;
      } else if (key == "shape") {
        shape = parse_shape();
        seen_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    if (!seen_descr || !seen_fortran || !seen_shape)
      fail("the header must have the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string_view header = text_;
    while (!header.empty() && (header.back() == ' ' || header.back() == '\n'))
      header.remove_suffix(1);
    throw InputError(path_, "header", what + " in " + std::string(header));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
  }
  std::string parse_string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail("expected a quoted string at offset " + std::to_string(pos_));
    const char quote = text_[pos_++];
    const size_t close = text_.find(quote, pos_);
    if (close == std::string_view::npos) fail("unterminated string");
    std::string s(text_.substr(pos_, close - pos_));
    pos_ = close + 1;
    return s;
  }
  bool parse_bool() {
    skip_space();
    for (const auto& [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False at offset " + std::to_string(pos_));
  }
  std::vector<int64_t> parse_shape() {
    std::vector<int64_t> shape;
    expect('(');
    while (!accept(')')) {
      skip_space();
      int64_t dim = -1;
      const char* first = text_.data() + pos_;
      const auto [ptr, ec] = std::from_chars(first, text_.data() + text_.size(), dim);
      if (ec != std::errc() || dim < 0)
        fail("bad dimension at offset " + std::to_string(pos_) + " of the shape");
      pos_ += static_cast<size_t>(ptr - first);
      shape.push_back(dim);
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint64_t read_le(const uint8_t* bytes, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return v;
}

// Opens a regular file for reading and gives its size; InputError naming it otherwise.
CFile open_regular_file(const std::string& path, uint64_t& size) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const bool there = std::filesystem::exists(path, ec);
    throw InputError(path, "", there ? "is not a regular file" : "file not found");
  }
  size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(path, "", "cannot stat: " + ec.message());
  CFile file(std::fopen(path.c_str(), "rb"));
  if (!file) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  return file;
}

}  // namespace

const char* npy_descr(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kInt32:
      return "<i4";
    case NpyDtype::kInt64:
      return "<i8";
    case NpyDtype::kFloat16:
      return "<f2";
    case NpyDtype::kFloat32:
      return "<f4";
    case NpyDtype::kFloat64:
      return "<f8";
    case NpyDtype::kUInt8:
      return "|u1";
    case NpyDtype::kBool:
      return "|b1";
    case NpyDtype::kBytes:
      break;
  }
  throw InvariantError("npy_descr: no fixed descr for this dtype");
}

size_t npy_item_size(NpyDtype dtype) {
  switch (dtype) {
    case NpyDtype::kInt32:
      return 4;
    case NpyDtype::kInt64:
      return 8;
    case NpyDtype::kFloat16:
      return 2;
    case NpyDtype::kFloat32:
      return 4;
    case NpyDtype::kFloat64:
      return 8;
    case NpyDtype::kUInt8:
      return 1;
    case NpyDtype::kBool:
      return 1;
    case NpyDtype::kBytes:
      break;
  }
  throw InvariantError("npy_item_size: no fixed size for this dtype");
}

std::string NpyArray::descr() const {
  return dtype == NpyDtype::kBytes ? "|S" + std::to_string(item_size) : npy_descr(dtype);
}

std::string NpyArray::shape_string() const {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

NpyArray read_npy(const std::string& path) {
  uint64_t file_size = 0;
  const CFile file = open_regular_file(path, file_size);
  std::vector<uint8_t> bytes(file_size);
  if (std::fread(bytes.data(), 1, file_size, file.get()) != file_size)
    throw InputError(path, "", std::string("read failed: ") + std::strerror(errno));
  return parse_npy(path, std::move(bytes));
}

NpyHeader parse_npy_header(const std::string& origin, const uint8_t* bytes, uint64_t prefix,
                           uint64_t total) {
  if (prefix < kMagicSize + 2 || std::memcmp(bytes, kMagic, kMagicSize) != 0)
    throw InputError(origin, "", "not a .npy file (bad magic)");
  const int major = bytes[kMagicSize];
  if (major != 1 && major != 2)
    throw InputError(origin, "header",
                     "unsupported .npy format version " + std::to_string(major) + "." +
                         std::to_string(bytes[kMagicSize + 1]) + " (supported: 1.0, 2.0)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (prefix < kMagicSize + 2 + len_bytes) throw InputError(origin, "header", "truncated header");
  const uint64_t header_len = read_le(bytes + kMagicSize + 2, len_bytes);
  NpyHeader h;
  h.payload_offset = kMagicSize + 2 + len_bytes + header_len;
  if (h.payload_offset > total)
    throw InputError(
        origin, "header",
        "header length " + std::to_string(header_len) + " runs past the end of the file");
  ADAQP_CHECK(h.payload_offset <= prefix, "the whole header is in the prefix read");
  const std::string_view header(reinterpret_cast<const char*>(bytes) + kMagicSize + 2 + len_bytes,
                                header_len);

  std::string descr;
  bool fortran = false;
  NpyArray& array = h.array;
  HeaderParser(header, origin).parse(descr, fortran, array.shape);
  bool known = false;
  for (NpyDtype d : kAllDtypes) {
    if (descr == npy_descr(d)) {
      array.dtype = d;
      array.item_size = npy_item_size(d);
      known = true;
    }
  }
  if (!known && descr.size() > 2 && descr.compare(0, 2, "|S") == 0) {
    size_t width = 0;
    const auto [ptr, ec] = std::from_chars(descr.data() + 2, descr.data() + descr.size(), width);
    if (ec == std::errc() && ptr == descr.data() + descr.size() && width >= 1 &&
        width <= kMaxBytesWidth) {
      array.dtype = NpyDtype::kBytes;
      array.item_size = width;
      known = true;
    }
  }
  if (!known)
    throw InputError(
        origin, "header",
        "unsupported dtype '" + descr + "' (supported: <i4 <i8 <f2 <f4 <f8 |u1 |b1 |S<n>)");
  if (fortran)
    throw InputError(origin, "header",
                     "Fortran-order arrays are not supported; save a C-order "
                     "array (numpy.ascontiguousarray)");

  uint64_t count = 1;
  for (int64_t dim : array.shape) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      throw InputError(origin, "header", "shape " + array.shape_string() + " is too large");
  }
  uint64_t expected = 0;
  if (__builtin_mul_overflow(count, array.item_size, &expected))
    throw InputError(origin, "header", "shape " + array.shape_string() + " is too large");
  const uint64_t available = total - h.payload_offset;
  if (available < expected)
    throw InputError(origin, "payload",
                     "truncated: " + std::to_string(available) + " bytes, shape " +
                         array.shape_string() + " of " + descr + " needs " +
                         std::to_string(expected));
  if (available > expected)
    throw InputError(origin, "payload",
                     std::to_string(available - expected) +
                         " unexpected bytes after the data of shape " + array.shape_string());
  h.elements = static_cast<int64_t>(count);
  return h;
}

NpyArray parse_npy(const std::string& origin, std::vector<uint8_t> bytes) {
  NpyHeader h = parse_npy_header(origin, bytes.data(), bytes.size(), bytes.size());
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(h.payload_offset));
  h.array.payload = std::move(bytes);
  return std::move(h.array);
}

NpyHeader read_npy_header(const std::string& path) {
  uint64_t file_size = 0;
  const CFile file = open_regular_file(path, file_size);
  // The fixed preamble, then the header it announces.
  std::vector<uint8_t> bytes(std::min<uint64_t>(file_size, kMagicSize + 6));
  if (std::fread(bytes.data(), 1, bytes.size(), file.get()) != bytes.size())
    throw InputError(path, "", std::string("read failed: ") + std::strerror(errno));
  if (bytes.size() >= kMagicSize + 2 && std::memcmp(bytes.data(), kMagic, kMagicSize) == 0) {
    const size_t len_bytes = bytes[kMagicSize] == 1 ? 2 : 4;
    if (bytes.size() >= kMagicSize + 2 + len_bytes) {
      const uint64_t end =
          std::min<uint64_t>(file_size, kMagicSize + 2 + len_bytes +
                                            read_le(bytes.data() + kMagicSize + 2, len_bytes));
      const size_t have = bytes.size();
      bytes.resize(std::max<uint64_t>(end, have));
      if (std::fread(bytes.data() + have, 1, bytes.size() - have, file.get()) !=
          bytes.size() - have)
        throw InputError(path, "", std::string("read failed: ") + std::strerror(errno));
    }
  }
  return parse_npy_header(path, bytes.data(), bytes.size(), file_size);
}

std::vector<uint8_t> read_npy_range(const std::string& path, const NpyHeader& h, int64_t first,
                                    int64_t count) {
  ADAQP_CHECK(first >= 0 && count >= 0 && first + count <= h.elements,
              "element range within the array");
  CFile file(std::fopen(path.c_str(), "rb"));
  if (!file) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::vector<uint8_t> out(static_cast<size_t>(count) * h.array.item_size);
  const uint64_t offset = h.payload_offset + static_cast<uint64_t>(first) * h.array.item_size;
  if (::fseeko(file.get(), static_cast<off_t>(offset), SEEK_SET) != 0 ||
      std::fread(out.data(), 1, out.size(), file.get()) != out.size())
    throw InputError(path, "payload",
                     "cannot read elements " + std::to_string(first) + " to " +
                         std::to_string(first + count) + ": " + std::strerror(errno));
  return out;
}

bool npy_is_int(const NpyArray& a) {
  return a.dtype == NpyDtype::kInt32 || a.dtype == NpyDtype::kInt64;
}

std::vector<int64_t> npy_to_int64(const NpyArray& a) {
  ADAQP_CHECK(npy_is_int(a), "dtype " + a.descr());
  return npy_to_int64(a.payload, a.dtype);
}

std::vector<int64_t> npy_to_int64(const std::vector<uint8_t>& bytes, NpyDtype d) {
  ADAQP_CHECK(d == NpyDtype::kInt32 || d == NpyDtype::kInt64, "an int32 or int64 payload");
  const size_t item = d == NpyDtype::kInt32 ? 4 : 8;
  std::vector<int64_t> out(bytes.size() / item);
  for (size_t i = 0; i < out.size(); ++i) {
    if (d == NpyDtype::kInt32) {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out[i] = v;
    } else {
      std::memcpy(&out[i], bytes.data() + 8 * i, 8);
    }
  }
  return out;
}

std::string npy_header(NpyDtype dtype, const std::vector<int64_t>& shape) {
  ADAQP_CHECK(dtype != NpyDtype::kBytes, "npy_header describes fixed-size dtypes only");
  NpyArray described;
  described.shape = shape;
  std::string header = std::string("{'descr': '") + npy_descr(dtype) +
                       "', 'fortran_order': False, 'shape': " + described.shape_string() + ", }";
  const size_t preamble = kMagicSize + 2 + 2;
  const size_t padded =
      (preamble + header.size() + 1 + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  header.append(padded - preamble - header.size() - 1, ' ');
  header.push_back('\n');
  if (header.size() > UINT16_MAX) throw InvariantError("npy_header: header too long");

  std::string head(kMagic, kMagicSize);
  head.push_back('\x01');
  head.push_back('\x00');
  head.push_back(static_cast<char>(header.size() & 0xff));
  head.push_back(static_cast<char>(header.size() >> 8));
  return head + header;
}

void write_npy(const std::string& path, NpyDtype dtype, const std::vector<int64_t>& shape,
               const void* payload, size_t bytes) {
  const std::string head = npy_header(dtype, shape);
  CFile file(std::fopen(path.c_str(), "wb"));
  if (!file) throw InputError(path, "", std::string("cannot create: ") + std::strerror(errno));
  if (std::fwrite(head.data(), 1, head.size(), file.get()) != head.size() ||
      (bytes > 0 && std::fwrite(payload, 1, bytes, file.get()) != bytes) ||
      std::fclose(file.release()) != 0)
    throw InputError(path, "", std::string("write failed: ") + std::strerror(errno));
}

}  // namespace adaqp
