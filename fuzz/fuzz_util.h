// Shared pieces of the libFuzzer targets: a scratch directory per fuzzing process and file writers.
// Every target feeds bytes to one loader and accepts only the project's typed errors
// (adaqp::Error); any other exception escapes and libFuzzer reports it as a crash, as it does for
// sanitizer reports.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace adaqp::fuzz {

// A fresh directory under the system temp dir for this process, removed at exit.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("adaqp-fuzz-" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return d;
  }();
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

}  // namespace adaqp::fuzz
