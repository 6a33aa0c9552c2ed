// Writing .npz archives (libzip) for the fuzz targets of the loaders that read them: the GraphSAINT
// layout's adj_full.npz and the OGB binary layout's raw/data.npz and raw/node-label.npz.
#pragma once

#include <zip.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace adaqp::fuzz {

using NpzMembers = std::vector<std::pair<const char*, std::string>>;  // name, valid bytes

// Writes an archive of `members` at `path`, member `replaced` (if any) holding `bytes` instead;
// each member deflated (as numpy.savez_compressed writes it) or stored (numpy.savez).
inline void write_npz(const std::filesystem::path& path, const NpzMembers& members, int replaced,
                      const std::string& bytes, bool deflate = true) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (archive == nullptr) throw std::runtime_error("fuzz harness: cannot create " + path.string());
  for (int i = 0; i < static_cast<int>(members.size()); ++i) {
    const std::string& content = i == replaced ? bytes : members[static_cast<size_t>(i)].second;
    // Both strings outlive zip_close, so the source can borrow them.
    zip_source_t* source = zip_source_buffer(archive, content.data(), content.size(), 0);
    const zip_int64_t index =
        source == nullptr ? -1
                          : zip_file_add(archive, members[static_cast<size_t>(i)].first, source, 0);
    if (index < 0 ||
        zip_set_file_compression(archive, index, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0) {
      if (source != nullptr && index < 0) zip_source_free(source);
      zip_discard(archive);
      throw std::runtime_error("fuzz harness: cannot add a member to " + path.string());
    }
  }
  if (zip_close(archive) != 0) {
    zip_discard(archive);
    throw std::runtime_error("fuzz harness: cannot write " + path.string());
  }
}

}  // namespace adaqp::fuzz
