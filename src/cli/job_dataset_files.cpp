#include "job_dataset_files.h"

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "collective_step.h"

namespace adaqp::cli {

std::optional<std::vector<DatasetFile>> agreed_dataset_files(Communicator& comm,
                                                             const JobConfig& cfg) {
  // One line per file, "bytes crc path" (the path last: it may hold spaces), after a first line
  // saying whether there is a listing at all.
  std::string text;
  run_step(comm, [&] {  // a failure on rank 0 stops every rank before the broadcast
    if (comm.rank() != 0) return;
    const std::optional<std::vector<DatasetFile>> files = list_dataset_files(cfg.dataset.path);
    text = files ? "listed\n" : "none\n";
    for (const DatasetFile& f : files.value_or(std::vector<DatasetFile>{}))
      text += fmt::format("{} {} {}\n", f.bytes, f.ends_crc, f.path);
  });
  uint64_t size = text.size();
  comm.broadcast(&size, sizeof size, 0);
  text.resize(size);
  comm.broadcast(text.data(), size, 0);
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  if (line != "listed") return std::nullopt;
  std::vector<DatasetFile> files;
  for (DatasetFile f; in >> f.bytes >> f.ends_crc && in.get() == ' ' && std::getline(in, f.path);)
    files.push_back(f);
  return files;
}

}  // namespace adaqp::cli
