#include "job_dataset_files.h"

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "adaqp/common/error.h"

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

void require_rank0s_dataset_copy(const std::string& dir,
                                 const std::optional<std::vector<DatasetFile>>& listing, int rank) {
  if (rank == 0 || !listing) return;
  const std::optional<std::vector<DatasetFile>> mine = list_dataset_files(dir);
  // No listing here: the directory is missing or unreadable, which loading it reports.
  if (!mine) return;
  const std::string differs = differing_dataset_copy(*listing, *mine);
  if (differs.empty()) return;
  throw InputError(dir, "dataset.path",
                   fmt::format("rank {}'s copy of the dataset differs from rank 0's: {} "
                               "(partition.method ptscotch reads the dataset on every rank: give "
                               "every host the same copy)",
                               rank, differs));
}

}  // namespace adaqp::cli
