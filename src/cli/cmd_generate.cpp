// adaqp generate: writes the job's synthetic graph (dataset.synthetic) in the NumPy layout, or a
// heterogeneous one in OGB's heterogeneous layout. Started by mpirun, the job's first process
// writes it (cli/mpi_launch.h).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "adaqp/common/choices.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/common/paths.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/generator.h"
#include "commands.h"
#include "job_options.h"
#include "mpi_launch.h"

namespace adaqp::cli {
namespace {

struct GenerateOptions {
  JobOptions job;
  std::string out;
};

void run_generate(const GenerateOptions& opt) {
  const JobConfig cfg = opt.job.load();
  setup_logging(0, cfg.output.log_level);
  // A job may name the directory it generates as its dataset (then generate, partition and train
  // share one file); any other dataset.path would be silently replaced by the generated graph.
  if (!cfg.dataset.path.empty() &&
      resolved_directory(cfg.dataset.path) != resolved_directory(opt.out)) {
    throw ConfigError(fmt::format(
        "dataset.path = {} but --out {}: adaqp generate writes the generated graph "
        "(dataset.synthetic.*) to --out and reads no dataset; leave dataset.path empty or make it "
        "the --out directory",
        cfg.dataset.path, opt.out));
  }
  // ... and read it in the layout written here.
  const DatasetFormat written =
      cfg.dataset.synthetic.heterogeneous ? DatasetFormat::kOgb : DatasetFormat::kNumpy;
  if (!cfg.dataset.path.empty() && cfg.dataset.format != DatasetFormat::kAuto &&
      cfg.dataset.format != written) {
    throw ConfigError(fmt::format(
        "dataset.format = {} but adaqp generate writes {} in the {} layout: the job could not read "
        "its dataset; set dataset.format to {} or auto",
        to_string(cfg.dataset.format), opt.out, to_string(written), to_string(written)));
  }
  // Before the work (write_dir_atomically checks again, against a writer that starts meanwhile).
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(opt.out, ec)))
    throw InputError(opt.out, "", "already exists; refusing to overwrite it");
  const double t0 = steady_now_s();
  const Graph g = generate_graph(cfg.dataset.synthetic);
  const double t1 = steady_now_s();
  if (g.heterogeneous()) {
    save_ogb_hetero(g, opt.out);
  } else {
    save_numpy(g, opt.out);
  }
  const double t2 = steady_now_s();
  fmt::print(
      "generated {} nodes, {} directed edges, {} features, {} classes ({} / {} / {} "
      "train / valid / test) in {:.3f} s\n",
      g.num_nodes, g.num_edges(), g.feat_dim, g.num_classes, g.train.size(), g.valid.size(),
      g.test.size(), t1 - t0);
  fmt::print("wrote {} ({} layout) in {:.3f} s\n", opt.out,
             g.heterogeneous() ? "OGB heterogeneous" : "NumPy", t2 - t1);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto opt = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Write the job's synthetic graph (dataset.synthetic.*) in the NumPy layout (a heterogeneous "
      "one in OGB's heterogeneous layout)");
  add_job_options(cmd, opt->job);
  cmd->add_option("-o,--out", opt->out, "output directory (must not exist)")
      ->required()
      ->check(non_empty_path());
  cmd->callback([opt] { run_on_first_rank("generating the graph", [&] { run_generate(*opt); }); });
}

}  // namespace adaqp::cli
