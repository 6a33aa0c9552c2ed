// Writing a dataset directory all at once: into "<dir>.tmp-<pid>", then renamed to `dir`.
#pragma once

#include <functional>
#include <string>

namespace adaqp {

// Calls write(tmp) for a new temporary directory beside `dir` and renames it to `dir`, which must
// not exist (InputError otherwise). On any failure nothing is left behind.
void write_dir_atomically(const std::string& dir,
                          const std::function<void(const std::string& tmp)>& write);

}  // namespace adaqp
