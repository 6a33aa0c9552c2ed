// adaqp partition: loads the job's dataset, partitions it and writes the partition directory.
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "adaqp/graph/dataset.h"
#include "adaqp/partition/partition_store.h"
#include "commands.h"
#include "job_options.h"
#include "report.h"

namespace adaqp::cli {
namespace {

struct PartitionCommandOptions {
  JobOptions job;
  std::string out;
};

void run_partition(const PartitionCommandOptions& opt) {
  const JobConfig cfg = opt.job.load();
  const std::string dir = opt.out.empty() ? partition_dir(cfg) : opt.out;
  const auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  const auto t0 = std::chrono::steady_clock::now();
  const Graph g = load_dataset(cfg.dataset);
  const auto t1 = std::chrono::steady_clock::now();
  const PartitionMeta meta = write_partition(dir, g, cfg.partition.options);
  const auto t2 = std::chrono::steady_clock::now();
  fmt::print("{}", partition_text(dir, meta));
  fmt::print("time         load {:.3f} s, partition and write {:.3f} s\n", secs(t0, t1),
             secs(t1, t2));
}

}  // namespace

void add_partition_command(CLI::App& app) {
  auto opt = std::make_shared<PartitionCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "partition", "Partition the job's dataset (partition.*) and write the partition directory");
  add_job_options(cmd, opt->job);
  cmd->add_option("-o,--out", opt->out,
                  "partition directory (must not exist); default: the job's partition.dir");
  cmd->callback([opt] { run_partition(*opt); });
}

}  // namespace adaqp::cli
