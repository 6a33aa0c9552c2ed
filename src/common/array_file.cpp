#include "adaqp/common/array_file.h"
#include "adaqp/common/c_file.h"
#include "adaqp/common/crc.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "adaqp/common/atomic_file.h"
#include "adaqp/common/error.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "array files are little-endian and written with plain memcpy");

namespace adaqp {
namespace {

constexpr char kMagic[8] = {'A', 'D', 'Q', 'P', 'A', 'R', 'R', '1'};
constexpr uint32_t kMaxNameLength = 4096;

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::U8;
};
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::F64;
};

const char* dtype_name(DType t) {
  switch (t) {
    case DType::I32:
      return "int32";
    case DType::I64:
      return "int64";
    case DType::U8:
      return "uint8";
    case DType::F32:
      return "float32";
    case DType::F64:
      return "float64";
  }
  return "unknown";
}

class Input {
 public:
  explicit Input(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "rb")) {
    if (!file_) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
    std::error_code ec;
    remaining_ = std::filesystem::file_size(path, ec);
    if (ec) throw InputError(path, "", "cannot stat: " + ec.message());
  }
  void get(void* data, size_t n, const std::string& where) {
    if (n > remaining_) throw InputError(path_, where, "file is truncated");
    if (n != 0 && std::fread(data, 1, n, file_.get()) != n)
      throw InputError(path_, where, "file is truncated or unreadable");
    remaining_ -= n;
  }
  template <typename T>
  T get_scalar(const std::string& where) {
    T v;
    get(&v, sizeof v, where);
    return v;
  }
  uint64_t remaining() const { return remaining_; }

 private:
  std::string path_;
  CFile file_;
  uint64_t remaining_ = 0;
};

// InputError unless `text` is printable ASCII: the first other byte, by position.
void require_text(const std::string& path, const std::string& where, const std::string& what,
                  const std::string& text) {
  for (size_t k = 0; k < text.size(); ++k) {
    const auto byte = static_cast<uint8_t>(text[k]);
    if (byte < 0x20 || byte > 0x7e)
      throw InputError(
          path, where,
          fmt::format("{}byte {} of {} is 0x{:02x}, not text", what, k, text.size(), byte));
  }
}

}  // namespace

// A vector of e.count elements of type T held by e.values; its data.
template <typename T>
void* ArrayFileReader::vector_of(Entry& e) {
  auto v = std::make_shared<std::vector<T>>(static_cast<size_t>(e.count));
  void* data = v->data();
  e.values = std::move(v);
  return data;
}

template <typename T>
void ArrayFileWriter::add(const std::string& name, const std::vector<T>& values) {
  add(name, std::vector<T>(values));
}

template <typename T>
void ArrayFileWriter::add(const std::string& name, std::vector<T>&& values) {
  ADAQP_CHECK(!name.empty() && name.size() <= kMaxNameLength, "array name length");
  auto owned = std::make_shared<std::vector<T>>(std::move(values));
  add_view(name, *owned);
  entries_[name].owner = std::move(owned);
}

template <typename T>
void ArrayFileWriter::add_view(const std::string& name, const std::vector<T>& values) {
  ADAQP_CHECK(!name.empty() && name.size() <= kMaxNameLength, "array name length");
  entries_[name] = Entry{DTypeOf<T>::value, values.size(), values.data(), nullptr};
}

void ArrayFileWriter::write(const std::string& path) const {
  AtomicFile out(path);
  const auto put_scalar = [&](auto v) { out.write(&v, sizeof v); };
  out.write(kMagic, sizeof kMagic);
  put_scalar(static_cast<uint32_t>(entries_.size()));
  for (const auto& [name, e] : entries_) {
    const size_t size = e.count * dtype_size(e.dtype);
    put_scalar(static_cast<uint32_t>(name.size()));
    out.write(name.data(), name.size());
    put_scalar(static_cast<uint8_t>(e.dtype));
    put_scalar(static_cast<uint64_t>(e.count));
    put_scalar(crc_bytes(kCrcEmpty, e.data, size));
    out.write(e.data, size);
  }
  out.commit();
}

ArrayFileReader::ArrayFileReader(const std::string& path) : path_(path) {
  Input in(path);
  char magic[sizeof kMagic];
  in.get(magic, sizeof magic, "header");
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    throw InputError(path, "header", "bad magic: not an adaqp array file");
  const uint32_t count = in.get_scalar<uint32_t>("header");
  for (uint32_t i = 0; i < count; ++i) {
    const std::string where = "array #" + std::to_string(i);
    const uint32_t name_len = in.get_scalar<uint32_t>(where);
    if (name_len == 0 || name_len > kMaxNameLength)
      throw InputError(path, where, "bad name length " + std::to_string(name_len));
    std::string name(name_len, '\0');
    in.get(name.data(), name_len, where);
    require_text(path, where, "name ", name);
    const std::string at = "array '" + name + "'";
    const uint8_t dtype = in.get_scalar<uint8_t>(at);
    if (dtype < static_cast<uint8_t>(DType::I32) || dtype > static_cast<uint8_t>(DType::F64))
      throw InputError(path, at, "unknown dtype code " + std::to_string(dtype));
    Entry e;
    e.dtype = static_cast<DType>(dtype);
    e.count = in.get_scalar<uint64_t>(at);
    const uint32_t crc = in.get_scalar<uint32_t>(at);
    const size_t elem = dtype_size(e.dtype);
    if (e.count > in.remaining() / elem)
      throw InputError(path, at,
                       "file is truncated (" + std::to_string(e.count) + " elements declared)");
    // Read into a vector of the element type, which take() hands over as it is.
    void* data = nullptr;
    switch (e.dtype) {
      case DType::I32:
        data = vector_of<int32_t>(e);
        break;
      case DType::I64:
        data = vector_of<int64_t>(e);
        break;
      case DType::U8:
        data = vector_of<uint8_t>(e);
        break;
      case DType::F32:
        data = vector_of<float>(e);
        break;
      case DType::F64:
        data = vector_of<double>(e);
        break;
    }
    in.get(data, e.count * elem, at);
    if (crc_bytes(kCrcEmpty, data, e.count * elem) != crc)
      throw InputError(path, at, "checksum mismatch (corrupted file)");
    if (entries_.count(name) != 0) throw InputError(path, at, "array stored twice");
    entries_[name] = std::move(e);
  }
  if (in.remaining() != 0)
    throw InputError(path, "", std::to_string(in.remaining()) + " unexpected trailing bytes");
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::I32:
    case DType::F32:
      return 4;
    case DType::I64:
    case DType::F64:
      return 8;
    case DType::U8:
      return 1;
  }
  return 0;
}

std::vector<std::pair<std::string, DType>> ArrayFileReader::arrays() const {
  std::vector<std::pair<std::string, DType>> out;
  for (const auto& [name, e] : entries_) out.emplace_back(name, e.dtype);
  return out;
}

uint64_t ArrayFileReader::count(const std::string& name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) throw InputError(path_, "array '" + name + "'", "missing");
  return it->second.count;
}

template <typename T>
std::vector<T>& ArrayFileReader::values_of(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw InputError(path_, "array '" + name + "'", "missing");
  const Entry& e = it->second;
  if (e.dtype != DTypeOf<T>::value)
    throw InputError(path_, "array '" + name + "'",
                     std::string("has dtype ") + dtype_name(e.dtype) + ", expected " +
                         dtype_name(DTypeOf<T>::value));
  return *static_cast<std::vector<T>*>(e.values.get());
}

template <typename T>
std::vector<T> ArrayFileReader::get(const std::string& name) const {
  return values_of<T>(name);
}

std::string ArrayFileReader::text(const std::string& name) const {
  const std::vector<uint8_t>& bytes = values_of<uint8_t>(name);
  std::string text(bytes.begin(), bytes.end());
  require_text(path_, "array '" + name + "'", "", text);
  return text;
}

template <typename T>
std::vector<T> ArrayFileReader::take(const std::string& name) {
  std::vector<T> values = std::move(values_of<T>(name));
  entries_.erase(name);
  return values;
}

template void ArrayFileWriter::add(const std::string&, const std::vector<int32_t>&);
template void ArrayFileWriter::add(const std::string&, std::vector<int32_t>&&);
template void ArrayFileWriter::add_view(const std::string&, const std::vector<int32_t>&);
template void ArrayFileWriter::add(const std::string&, const std::vector<int64_t>&);
template void ArrayFileWriter::add(const std::string&, std::vector<int64_t>&&);
template void ArrayFileWriter::add_view(const std::string&, const std::vector<int64_t>&);
template void ArrayFileWriter::add(const std::string&, const std::vector<uint8_t>&);
template void ArrayFileWriter::add(const std::string&, std::vector<uint8_t>&&);
template void ArrayFileWriter::add_view(const std::string&, const std::vector<uint8_t>&);
template void ArrayFileWriter::add(const std::string&, const std::vector<float>&);
template void ArrayFileWriter::add(const std::string&, std::vector<float>&&);
template void ArrayFileWriter::add_view(const std::string&, const std::vector<float>&);
template void ArrayFileWriter::add(const std::string&, const std::vector<double>&);
template void ArrayFileWriter::add(const std::string&, std::vector<double>&&);
template void ArrayFileWriter::add_view(const std::string&, const std::vector<double>&);
template std::vector<int32_t> ArrayFileReader::get(const std::string&) const;
template std::vector<int64_t> ArrayFileReader::get(const std::string&) const;
template std::vector<uint8_t> ArrayFileReader::get(const std::string&) const;
template std::vector<float> ArrayFileReader::get(const std::string&) const;
template std::vector<double> ArrayFileReader::get(const std::string&) const;
template std::vector<int32_t> ArrayFileReader::take(const std::string&);
template std::vector<int64_t> ArrayFileReader::take(const std::string&);
template std::vector<uint8_t> ArrayFileReader::take(const std::string&);
template std::vector<float> ArrayFileReader::take(const std::string&);
template std::vector<double> ArrayFileReader::take(const std::string&);

}  // namespace adaqp
