#include "job_dataset_files.h"

namespace adaqp::cli {

std::optional<std::vector<DatasetFile>> job_dataset_files(const JobConfig& cfg,
                                                          const std::string& partition_dir) {
  return list_dataset_files(
      cfg.dataset.path, {partition_dir, cfg.output.dir, checkpoint_dir(cfg), part_cache_dir(cfg)});
}

}  // namespace adaqp::cli
