// Helpers shared by the test binaries: temporary directories and the shared real datasets.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

namespace adaqp::test {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("adaqp-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str(const std::string& child = "") const {
    return child.empty() ? path_.string() : (path_ / child).string();
  }

 private:
  std::filesystem::path path_;
};

// The message of the E that f throws ("" if it throws none).
template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// True when `part` occurs in `s`.
inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Directory of a shared dataset ("" if the shared folder is absent).
inline std::string shared_dataset(const std::string& name) {
  const char* root = std::getenv("ADAQP_SHARED_DATASETS");
  if (root == nullptr) return "";
  std::filesystem::path p = std::filesystem::path(root) / name;
  return std::filesystem::exists(p / "raw") ? p.string() : "";
}

inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace adaqp::test

// Skips the test with a visible reason when a shared dataset is absent; fails instead under CI.
#define ADAQP_REQUIRE_SHARED_DATASET(var, name)                                              \
  const std::string var = ::adaqp::test::shared_dataset(name);                               \
  if (var.empty()) {                                                                         \
    if (::adaqp::test::running_in_ci()) FAIL() << "shared dataset '" << name << "' missing"; \
    GTEST_SKIP() << "shared dataset '" << name << "' not found (set ADAQP_SHARED_DATASETS)"; \
  }
