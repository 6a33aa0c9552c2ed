#include "adaqp/common/paths.h"

namespace adaqp {

std::filesystem::path directory_path(const std::filesystem::path& dir) {
  std::filesystem::path p = dir.lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

std::string directory_name(const std::filesystem::path& dir) {
  return directory_path(dir).filename().string();
}

}  // namespace adaqp
