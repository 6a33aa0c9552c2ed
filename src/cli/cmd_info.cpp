// adaqp info: statistics of a dataset and of a partition, as text or JSON. Started by mpirun, the
// job's first process reports (cli/mpi_launch.h).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph.h"
#include "adaqp/partition/dataset_files.h"
#include "adaqp/partition/part_agreement.h"
#include "adaqp/partition/partition_dir.h"
#include "commands.h"
#include "job_options.h"
#include "mpi_launch.h"
#include "report.h"

namespace adaqp::cli {
namespace {

struct InfoOptions {
  JobOptions job;
  std::string dataset;    // a dataset directory, format detected, no transforms
  std::string partition;  // a partition directory
  bool json = false;
  bool covers = false;
  bool verify = false;
};

void run_info(const InfoOptions& opt) {
  const bool want_job = !opt.job.config.empty() || !opt.job.overrides.empty();
  if (!want_job && opt.dataset.empty() && opt.partition.empty())
    throw ConfigError(
        "info: give --config or --set (the job's dataset), --dataset DIR or --partition DIR");
  // --dataset reads the directory as stored: --set keys (a job's transforms, its split) would load
  // the job's dataset instead, silently another one.
  if (!opt.dataset.empty() && !opt.job.overrides.empty()) {
    throw ConfigError(
        "info: --dataset DIR reads the directory as stored and takes no --set; to read it as a "
        "job would (dataset.split, transforms), give --set dataset.path=DIR with the other --set "
        "keys instead");
  }
  if ((opt.covers || opt.verify) && opt.partition.empty())
    throw ConfigError(std::string("info: ") + (opt.covers ? "--covers" : "--verify") +
                      " needs --partition DIR");
  // JSON: one object, each report null when not asked for. Names are the dataset's bytes: those
  // that are not UTF-8 print as U+FFFD.
  std::string text;
  Json json = {{"dataset", nullptr}, {"partition", nullptr}, {"boundary_covers", nullptr}};
  std::optional<JobConfig> job;
  std::string job_fingerprint;  // of the job's dataset as it trains on it
  if (want_job || !opt.dataset.empty()) {
    DatasetSpec spec;
    if (want_job) {
      job = opt.job.load();
      setup_logging(0, job->output.log_level);
      spec = job->dataset;
    } else {
      spec.path = opt.dataset;
    }
    const Graph g = load_dataset(spec);
    if (job) job_fingerprint = fingerprint(g);
    if (opt.json) {
      json["dataset"] = dataset_json(g);
    } else {
      text += dataset_text(g);
    }
  }
  if (!opt.partition.empty()) {
    const PartitionMeta meta = read_partition_meta(opt.partition);
    // --verify: every part's share of the check that the parts belong together, as adaqp train
    // makes it (partition/part_agreement.h).
    std::vector<int64_t> contributions;
    const auto read_part = [&](int r) {
      Part part = load_part(opt.partition, r, meta.parts);
      if (opt.verify) {
        const std::vector<int64_t> mine = part_contribution(part);
        contributions.insert(contributions.end(), mine.begin(), mine.end());
      }
      return part;
    };
    // The counts come from meta.yaml; every part file must be there. --verify (and --covers) read
    // every part whole: its checksums and structure.
    for (int r = 0; r < meta.parts; ++r) {
      const std::string part = partition_part_path(opt.partition, r);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(part, ec)) {
        throw InputError(part, "", fmt::format("missing: meta.yaml lists {} parts", meta.parts));
      }
      if (opt.verify && !opt.covers) read_part(r);
    }
    if (opt.verify && !opt.covers)
      check_contributions_agree(contributions, meta.parts, opt.partition);
    // With a job, --verify also checks that the partition is the job's, as adaqp train would.
    if (opt.verify && job) {
      job->partition.options.dataset_files = list_dataset_files(job->dataset.path);
      require_partition_matches(meta, job->partition.options, opt.partition);
      if (meta.dataset_fingerprint != job_fingerprint) {
        throw InputError(partition_meta_path(opt.partition), "dataset_fingerprint",
                         fmt::format("the partition's dataset is {}, the job's {}: another graph",
                                     meta.dataset_fingerprint, job_fingerprint));
      }
    }
    if (opt.json) {
      json["partition"] = partition_json(opt.partition, meta);
      if (opt.verify) json["partition"]["verified"] = true;
    } else {
      text += partition_text(opt.partition, meta);
      // Said, so that a sound partition is not mistaken for an unchecked one.
      if (opt.verify)
        text += fmt::format(
            "verified: all {} parts read whole: present, checksums and structure sound, each "
            "part's send lists the halo rows its peers expect{}\n",
            meta.parts, job ? "; the job's partition" : "");
    }
    if (opt.covers) {
      std::vector<PairCover> pairs;
      for (int r = 0; r < meta.parts; ++r) {
        const std::vector<PairCover> into = boundary_covers(read_part(r));
        pairs.insert(pairs.end(), into.begin(), into.end());
      }
      if (opt.verify) check_contributions_agree(contributions, meta.parts, opt.partition);
      if (opt.json) {
        json["boundary_covers"] = covers_json(pairs);
      } else {
        text += covers_text(pairs);
      }
    }
  }
  if (opt.json) {
    fmt::print("{}\n", json.dump(-1, ' ', false, Json::error_handler_t::replace));
  } else {
    fmt::print("{}", text);
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
  cmd->add_flag("--covers", opt->covers,
                "with --partition: read every part and count, per ordered pair of parts, the rows "
                "a minimum vertex cover of its cut edges needs against today's source rows");
  cmd->add_flag("--verify", opt->verify,
                "with --partition: read every part whole and check its checksums and structure "
                "(without it, only that every part file is there); with a job (--config, --set), "
                "also that the partition is the job's: its dataset and partition.* keys");
  cmd->callback([opt] { run_on_first_rank("reading the dataset", [&] { run_info(*opt); }); });
}

}  // namespace adaqp::cli
