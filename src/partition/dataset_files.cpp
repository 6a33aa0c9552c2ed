#include "adaqp/partition/dataset_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "adaqp/common/crc.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

// CRC-32 of the file's first and last kDatasetFileEndBytes (the whole file when it is smaller);
// nullopt when it cannot be read (a loader could not read it either).
std::optional<uint32_t> ends_crc(const fs::path& path, int64_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  uint32_t crc = kCrcEmpty;
  std::vector<char> buf(static_cast<size_t>(std::min(bytes, 2 * kDatasetFileEndBytes)));
  auto add = [&](int64_t offset, int64_t n) {
    in.seekg(offset);
    if (!in.read(buf.data(), n)) return false;
    crc = crc_bytes(crc, buf.data(), static_cast<size_t>(n));
    return true;
  };
  const bool ok =
      bytes <= 2 * kDatasetFileEndBytes
          ? bytes == 0 || add(0, bytes)
          : add(0, kDatasetFileEndBytes) && add(bytes - kDatasetFileEndBytes, kDatasetFileEndBytes);
  if (!ok) return std::nullopt;
  return crc;
}

// Whether a loader may read the file at `rel` (relative to the dataset directory).
bool loader_file(const fs::path& rel) {
  const std::string first = rel.begin()->string();
  if (std::distance(rel.begin(), rel.end()) > 1) return first == "raw" || first == "split";
  const std::string ext = rel.extension().string();
  return ext == ".npy" || ext == ".npz" || ext == ".json";
}

std::string describe(const DatasetFile& f) {
  return fmt::format("{} bytes, CRC-32 of its ends {:08x}", f.bytes, f.ends_crc);
}

// The first file of `a` that `b` lacks (second: null) or holds otherwise (second: b's entry).
std::pair<const DatasetFile*, const DatasetFile*> first_difference(
    const std::vector<DatasetFile>& a, const std::vector<DatasetFile>& b) {
  for (const DatasetFile& f : a) {
    const auto it =
        std::find_if(b.begin(), b.end(), [&](const DatasetFile& g) { return g.path == f.path; });
    if (it == b.end()) return {&f, nullptr};
    if (it->bytes != f.bytes || it->ends_crc != f.ends_crc) return {&f, &*it};
  }
  return {nullptr, nullptr};
}

}  // namespace

std::optional<std::vector<DatasetFile>> list_dataset_files(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
  const fs::path root = fs::weakly_canonical(dir, ec);
  std::vector<fs::path> paths;
  // raw/ or split/ may be a link to the files elsewhere (a store per host): followed, so that they
  // are listed under the link's name (they were left out, and their changes unseen).
  const auto options = fs::directory_options::skip_permission_denied |
                       fs::directory_options::follow_directory_symlink;
  for (auto it = fs::recursive_directory_iterator(root, options, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(root);
    if (it->is_directory(ec)) {
      const std::string name = rel.begin()->string();
      if (name != "raw" && name != "split") it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || !loader_file(rel)) continue;
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
    const std::optional<uint32_t> crc = ec ? std::nullopt : ends_crc(p, f.bytes);
    if (!crc) continue;  // unreadable: not a file a loader reads
    f.ends_crc = *crc;
    files.push_back(std::move(f));
  }
  return files;
}

std::string changed_dataset_file(const std::vector<DatasetFile>& recorded,
                                 const std::vector<DatasetFile>& now) {
  const auto [was, is] = first_difference(recorded, now);
  if (was == nullptr) return {};
  if (is == nullptr) return fmt::format("{} ({}) is gone", was->path, describe(*was));
  return fmt::format("{} had {}, now {}", was->path, describe(*was), describe(*is));
}

std::string differing_dataset_copy(const std::vector<DatasetFile>& reference,
                                   const std::vector<DatasetFile>& copy) {
  const auto [ref, mine] = first_difference(reference, copy);
  if (ref != nullptr && mine == nullptr)
    return fmt::format("{} ({} on rank 0) is missing here, or not a readable file", ref->path,
                       describe(*ref));
  if (ref != nullptr)
    return fmt::format("{} has {} here, {} on rank 0", ref->path, describe(*mine), describe(*ref));
  // A file only this copy has may change what its loader reads (raw/edge.csv.gz beside an OGB
  // binary layout is read instead of it).
  const DatasetFile* extra = first_difference(copy, reference).first;
  if (extra != nullptr)
    return fmt::format("{} ({}) is here, not on rank 0", extra->path, describe(*extra));
  return {};
}

}  // namespace adaqp
