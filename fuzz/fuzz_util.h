// Shared pieces of the fuzz targets: a scratch directory per fuzzing process, file writers, the
// record of the errors reached, and mutation of array files past their checksums. Every target
// feeds bytes to one loader and accepts only the project's typed errors (adaqp::Error), which it
// records with note_error; any other exception escapes and the driver (libFuzzer, or
// fuzz/replay_main.cpp in the ordinary build) reports it as a crash, as it does for signals and
// sanitizer reports.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "adaqp/common/array_file.h"

namespace adaqp::fuzz {

// A fresh directory under the system temp dir for this process, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("adaqp-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  // Registered once `dir` is complete, so that the removal runs before `dir`'s destructor (exit
  // handlers run in reverse order of registration); registered inside its initialiser, it ran
  // after it and read the freed path (AddressSanitizer: heap-use-after-free at exit).
  static const bool removed_at_exit = std::atexit([] { std::filesystem::remove_all(dir); }) == 0;
  (void)removed_at_exit;
  return dir;
}

// Writes `bytes` to `path` (creating its directory); std::runtime_error if it cannot.
inline void write_file(const std::filesystem::path& path, const void* data, size_t size) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.flush()) throw std::runtime_error("fuzz harness: cannot write " + path.string());
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  write_file(path, bytes.data(), bytes.size());
}

// gzip-compresses `size` bytes into `path`; std::runtime_error if it cannot.
inline void write_gz(const std::filesystem::path& path, const void* data, size_t size) {
  std::filesystem::create_directories(path.parent_path());
  gzFile f = gzopen(path.c_str(), "wb1");
  if (f == nullptr) throw std::runtime_error("fuzz harness: cannot create " + path.string());
  const int written = size == 0 ? 0 : gzwrite(f, data, static_cast<unsigned>(size));
  const int closed = gzclose(f);
  if (written != static_cast<int>(size) || closed != Z_OK)
    throw std::runtime_error("fuzz harness: cannot write " + path.string());
}

inline void write_gz(const std::filesystem::path& path, const std::string& text) {
  write_gz(path, text.data(), text.size());
}

// A version 1.0 .npy file of `values` with the given descr and shape.
template <typename T>
std::string npy(const std::string& descr, const std::string& shape, const std::vector<T>& values) {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return out;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The distinct errors the target has reached, and how often: a message with its digits folded to
// '#' and its quoted values to '?' (so that "entry 3 = 9" and "entry 7 = 1" of one check, or
// "invalid value 'x'" and "invalid value 'y'", count once); at most kMaxErrorKinds kinds are kept.
inline constexpr size_t kMaxErrorKinds = 4096;
inline std::map<std::string, long>& errors_reached() {
  static std::map<std::string, long> errors;
  return errors;
}

inline std::string error_kind(const std::string& message) {
  std::string kind;
  for (size_t i = 0; i < message.size(); ++i) {
    const char c = message[i];
    if (c == '\'') {
      const size_t close = message.find('\'', i + 1);
      if (close == std::string::npos) break;
      kind += "'?'";
      i = close;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      if (kind.empty() || kind.back() != '#') kind += '#';
    } else {
      kind += c;
    }
  }
  return kind;
}

inline void note_error(const std::exception& e) {
  const std::string kind = error_kind(e.what());
  auto& errors = errors_reached();
  if (errors.size() < kMaxErrorKinds || errors.count(kind) != 0) ++errors[kind];
}

// An array of an array file (common/array_file.h), as raw little-endian bytes.
struct RawArray {
  std::string name;
  DType dtype;
  std::vector<uint8_t> bytes;
};

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> values_of(const std::vector<uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));  // a partial last element is dropped
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// The arrays of a valid array file.
inline std::vector<RawArray> read_arrays(const std::filesystem::path& path) {
  const ArrayFileReader in(path.string());
  std::vector<RawArray> out;
  for (const auto& [name, dtype] : in.arrays()) {
    RawArray a{name, dtype, {}};
    switch (dtype) {
      case DType::I32:
        a.bytes = bytes_of(in.get<int32_t>(name));
        break;
      case DType::I64:
        a.bytes = bytes_of(in.get<int64_t>(name));
        break;
      case DType::U8:
        a.bytes = bytes_of(in.get<uint8_t>(name));
        break;
      case DType::F32:
        a.bytes = bytes_of(in.get<float>(name));
        break;
      case DType::F64:
        a.bytes = bytes_of(in.get<double>(name));
        break;
    }
    out.push_back(std::move(a));
  }
  return out;
}

// Writes `arrays` as an array file with correct checksums: what it holds reaches the reader's
// structural checks instead of stopping at the checksum.
inline void write_arrays(const std::filesystem::path& path, const std::vector<RawArray>& arrays) {
  ArrayFileWriter out;
  for (const RawArray& a : arrays) {
    switch (a.dtype) {
      case DType::I32:
        out.add(a.name, values_of<int32_t>(a.bytes));
        break;
      case DType::I64:
        out.add(a.name, values_of<int64_t>(a.bytes));
        break;
      case DType::U8:
        out.add(a.name, values_of<uint8_t>(a.bytes));
        break;
      case DType::F32:
        out.add(a.name, values_of<float>(a.bytes));
        break;
      case DType::F64:
        out.add(a.name, values_of<double>(a.bytes));
        break;
    }
  }
  out.write(path.string());
}

// One structural edit of `arrays` chosen by the input: byte 0 picks the array, byte 1 the edit
// (0: replace its values by the rest of the input; 1: overwrite its bytes from the offset in bytes
// 2..3 with the rest, its length unchanged; 2: truncate it to that many elements; 3: remove it;
// 4: change its element type to that of byte 2). Returns the edited copy.
inline std::vector<RawArray> mutate_arrays(std::vector<RawArray> arrays, const uint8_t* data,
                                           size_t size) {
  if (arrays.empty() || size < 2) return arrays;
  RawArray& a = arrays[data[0] % arrays.size()];
  const size_t offset = size >= 4 ? (data[2] | (static_cast<size_t>(data[3]) << 8)) : 0;
  const uint8_t* rest = data + std::min<size_t>(size, 4);
  const size_t rest_size = size - std::min<size_t>(size, 4);
  switch (data[1] % 5) {
    case 0:
      a.bytes.assign(rest, rest + rest_size);
      break;
    case 1:
      for (size_t i = 0; i < rest_size && offset + i < a.bytes.size(); ++i)
        a.bytes[offset + i] = rest[i];
      break;
    case 2:
      a.bytes.resize(std::min(a.bytes.size(), offset * dtype_size(a.dtype)));
      break;
    case 3:
      arrays.erase(arrays.begin() + (data[0] % arrays.size()));
      break;
    case 4:
      a.dtype = static_cast<DType>(1 + (size >= 3 ? data[2] : 0) % 5);
      break;
  }
  return arrays;
}

}  // namespace adaqp::fuzz
