// Directories as jobs and users name them: one spelling for every comparison, message and name.
#pragma once

#include <filesystem>
#include <string>

namespace adaqp {

// `dir` lexically normalised, without a trailing separator: "out/part/", "out/./part" and
// "out/part" are the same path, whose filename() is "part". Resolves neither symbolic links nor
// the working directory: pass fs::weakly_canonical or fs::absolute of it for that.
std::filesystem::path directory_path(const std::filesystem::path& dir);

// `dir` absolute with its symbolic links resolved as far as it exists, as directory_path (as
// written, made absolute, where it cannot be resolved: a link loop): two names of one directory
// give the same path.
std::filesystem::path resolved_directory(const std::filesystem::path& dir);

// Whether `inner` is `outer` or lies inside it (both resolved_directory).
bool lies_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

// The directory's own name ("cora" for "data/cora/"): a dataset's name where it has none else.
std::string directory_name(const std::filesystem::path& dir);

}  // namespace adaqp
