// adaqp info: statistics of a dataset and of a partition, as text or JSON.
#include <fmt/format.h>

#include <memory>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/partition/partition_store.h"
#include "commands.h"
#include "job_options.h"
#include "report.h"

namespace adaqp::cli {
namespace {

struct InfoOptions {
  JobOptions job;
  std::string dataset;    // a dataset directory, format detected, no transforms
  std::string partition;  // a partition directory
  bool json = false;
};

void run_info(const InfoOptions& opt) {
  const bool want_job = !opt.job.config.empty() || !opt.job.overrides.empty();
  if (!want_job && opt.dataset.empty() && opt.partition.empty())
    throw ConfigError("info: give --config (the job's dataset), --dataset DIR or --partition DIR");
  std::string dataset_report, partition_report;
  if (want_job || !opt.dataset.empty()) {
    DatasetSpec spec;
    if (want_job) {
      spec = opt.job.load().dataset;
    } else {
      spec.path = opt.dataset;
    }
    const Graph g = load_dataset(spec);
    dataset_report = opt.json ? dataset_json(g) : dataset_text(g);
  }
  if (!opt.partition.empty()) {
    const PartitionMeta meta = read_partition_meta(opt.partition);
    partition_report =
        opt.json ? partition_json(opt.partition, meta) : partition_text(opt.partition, meta);
  }
  if (opt.json) {
    fmt::print("{{\"dataset\": {}, \"partition\": {}}}\n",
               dataset_report.empty() ? "null" : dataset_report,
               partition_report.empty() ? "null" : partition_report);
  } else {
    fmt::print("{}{}", dataset_report, partition_report);
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto opt = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Print statistics of a dataset and/or a partition");
  add_job_options(cmd, opt->job);
  cmd->add_option("--dataset", opt->dataset,
                  "dataset directory (OGB, NumPy or GraphSAINT layout, as stored)")
      ->excludes("--config");
  cmd->add_option("--partition", opt->partition, "partition directory");
  cmd->add_flag("--json", opt->json, "machine-readable output (one JSON object)");
  cmd->callback([opt] { run_info(*opt); });
}

}  // namespace adaqp::cli
