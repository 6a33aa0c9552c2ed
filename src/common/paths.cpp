#include "adaqp/common/paths.h"

#include <algorithm>
#include <system_error>

namespace adaqp {

std::filesystem::path directory_path(const std::filesystem::path& dir) {
  std::filesystem::path p = dir.lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

std::filesystem::path resolved_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
  const std::filesystem::path real = std::filesystem::weakly_canonical(absolute, ec);
  return directory_path(ec ? absolute : real);
}

bool lies_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  const std::filesystem::path o = resolved_directory(outer), i = resolved_directory(inner);
  return std::mismatch(o.begin(), o.end(), i.begin(), i.end()).first == o.end();
}

std::string directory_name(const std::filesystem::path& dir) {
  return directory_path(dir).filename().string();
}

}  // namespace adaqp
