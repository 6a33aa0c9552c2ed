#include "same_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp::cli {
namespace {

// Keys a host may set its own way: its paths (each host may mount the files elsewhere), its cores
// and its log.
constexpr std::array<const char*, 7> kPerHostKeys = {
    "dataset.path", "partition.dir",    "partition.local_dir", "training.checkpoint_dir",
    "output.dir",   "training.threads", "output.log_level"};

std::vector<std::pair<std::string, std::string>> shared_keys(const JobConfig& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& kv : key_values(cfg)) {
    if (std::find(kPerHostKeys.begin(), kPerHostKeys.end(), kv.first) == kPerHostKeys.end())
      out.push_back(std::move(kv));
  }
  return out;
}

std::string serialize(const std::vector<std::pair<std::string, std::string>>& keys) {
  std::string text;
  for (const auto& [key, value] : keys) text += key + '\n' + value + '\n';
  return text;
}

}  // namespace

void require_same_job(Communicator& comm, const JobConfig& cfg,
                      const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<std::pair<std::string, std::string>> mine = shared_keys(cfg);
  mine.insert(mine.end(), options.begin(), options.end());
  const std::string root = broadcast_text(comm, serialize(mine));
  if (comm.rank() == 0 || root == serialize(mine)) return;
  std::vector<std::string> lines;
  for (size_t start = 0; start < root.size();) {
    const size_t end = root.find('\n', start);
    lines.push_back(root.substr(start, end - start));
    start = end + 1;
  }
  for (size_t i = 0; i < mine.size(); ++i) {
    const std::string theirs_key = 2 * i < lines.size() ? lines[2 * i] : std::string();
    const std::string theirs = 2 * i + 1 < lines.size() ? lines[2 * i + 1] : std::string();
    if (theirs_key == mine[i].first && theirs == mine[i].second) continue;
    throw ConfigError(fmt::format(
        "started with another job than rank 0: {} is {} here and {} on rank 0 (every rank needs "
        "the same configuration and command line; only paths, training.threads and "
        "output.log_level may differ between hosts)",
        mine[i].first, mine[i].second, theirs_key == mine[i].first ? theirs : "not set"));
  }
}

}  // namespace adaqp::cli
