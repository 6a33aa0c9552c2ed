#include "job_dataset_files.h"

#include <fmt/format.h>

#include <sstream>
#include <string>

namespace adaqp::cli {

std::optional<std::vector<DatasetFile>> broadcast_dataset_files(
    Communicator& comm, const std::optional<std::vector<DatasetFile>>& listing) {
  // One line per file, "bytes crc path" (the path last: it may hold spaces), after a first line
  // saying whether there is a listing at all.
  std::string text;
  if (comm.rank() == 0) {
    text = listing ? "listed\n" : "none\n";
    for (const DatasetFile& f : listing.value_or(std::vector<DatasetFile>{}))
      text += fmt::format("{} {} {}\n", f.bytes, f.ends_crc, f.path);
  }
  std::istringstream in(broadcast_text(comm, std::move(text)));
  std::string line;
  std::getline(in, line);
  if (line != "listed") return std::nullopt;
  std::vector<DatasetFile> files;
  for (DatasetFile f; in >> f.bytes >> f.ends_crc && in.get() == ' ' && std::getline(in, f.path);)
    files.push_back(f);
  return files;
}

}  // namespace adaqp::cli
