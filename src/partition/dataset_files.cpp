#include "adaqp/partition/dataset_files.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "adaqp/common/error.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

// CRC-32 of the file's first and last kDatasetFileEndBytes (the whole file when it is smaller).
uint32_t ends_crc(const fs::path& path, int64_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "", "cannot read it to record the dataset's files");
  uLong crc = crc32_z(0L, Z_NULL, 0);
  std::vector<char> buf(static_cast<size_t>(std::min(bytes, 2 * kDatasetFileEndBytes)));
  auto add = [&](int64_t offset, int64_t n) {
    in.seekg(offset);
    if (!in.read(buf.data(), n))
      throw InputError(path.string(), "", "read failed while recording the dataset's files");
    crc = crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<size_t>(n));
  };
  if (bytes <= 2 * kDatasetFileEndBytes) {
    if (bytes > 0) add(0, bytes);
  } else {
    add(0, kDatasetFileEndBytes);
    add(bytes - kDatasetFileEndBytes, kDatasetFileEndBytes);
  }
  return static_cast<uint32_t>(crc);
}

bool under(const fs::path& path, const std::vector<fs::path>& skip) {
  for (const fs::path& s : skip) {
    const fs::path rel = path.lexically_relative(s);
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

std::string describe(const DatasetFile& f) {
  return fmt::format("{} bytes, CRC-32 of its ends {:08x}", f.bytes, f.ends_crc);
}

}  // namespace

std::optional<std::vector<DatasetFile>> list_dataset_files(const std::string& dir,
                                                           const std::vector<std::string>& skip) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
  const fs::path root = fs::weakly_canonical(dir, ec);
  std::vector<fs::path> skipped;
  for (const std::string& s : skip) {
    if (!s.empty()) skipped.push_back(fs::weakly_canonical(s, ec));
  }
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (under(it->path(), skipped)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    paths.push_back(it->path());
    if (paths.size() > kMaxDatasetFiles) return std::nullopt;
  }
  if (ec) throw InputError(dir, "", "cannot list the dataset's files: " + ec.message());
  std::sort(paths.begin(), paths.end());
  std::vector<DatasetFile> files;
  for (const fs::path& p : paths) {
    DatasetFile f;
    f.path = p.lexically_relative(root).generic_string();
    f.bytes = static_cast<int64_t>(fs::file_size(p, ec));
    if (ec) throw InputError(p.string(), "", "cannot read its size: " + ec.message());
    f.ends_crc = ends_crc(p, f.bytes);
    files.push_back(std::move(f));
  }
  return files;
}

std::string changed_dataset_file(const std::vector<DatasetFile>& recorded,
                                 const std::vector<DatasetFile>& now) {
  for (const DatasetFile& was : recorded) {
    const auto it = std::find_if(now.begin(), now.end(),
                                 [&](const DatasetFile& f) { return f.path == was.path; });
    if (it == now.end()) return fmt::format("{} ({}) is gone", was.path, describe(was));
    if (it->bytes != was.bytes || it->ends_crc != was.ends_crc) {
      return fmt::format("{} had {}, now {}", was.path, describe(was), describe(*it));
    }
  }
  return {};
}

}  // namespace adaqp
