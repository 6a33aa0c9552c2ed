#include "atomic_dir.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "adaqp/common/atomic_file.h"
#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"

namespace adaqp {
namespace fs = std::filesystem;

void write_dir_atomically(const std::string& dir,
                          const std::function<void(const std::string& tmp)>& write) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)))
    throw InputError(dir, "", "already exists; refusing to overwrite it");
  const fs::path target = directory_path(dir);
  remove_stale_temporaries(target.parent_path().string(),
                           target.filename().string() + AtomicFile::kTempInfix);
  const std::string tmp = temp_path(target.string());
  // Its parents are made as a partition directory's are.
  ec.clear();  // symlink_status's "no such file" above
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (!ec && !fs::create_directory(tmp, ec) && !ec)
    ec = std::make_error_code(std::errc::file_exists);
  if (ec) {
    throw InputError(dir, "",
                     "cannot create the directory: " + ec.message() + " (it is written first as " +
                         fs::path(tmp).filename().string() + " beside it)");
  }
  try {
    write(tmp);
    fs::rename(tmp, dir, ec);
    if (ec) throw InputError(dir, "", "cannot rename " + tmp + " into place: " + ec.message());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

}  // namespace adaqp
