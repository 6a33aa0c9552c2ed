// adaqp partition: loads the job's dataset, partitions it and writes the partition directory. With
// partition.method ptscotch it runs under mpirun or srun, one rank per part, each on a slice of the
// graph (partition/partition_in_slices.h); the directory must be one every rank sees to end up
// whole.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/mpi_session.h"
#include "adaqp/comm/solo_work.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/common/timeouts.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/partition/partition_dir.h"
#include "adaqp/partition/partition_in_slices.h"
#include "collective_step.h"
#include "commands.h"
#include "job_dataset_files.h"
#include "job_options.h"
#include "mpi_launch.h"
#include "report.h"

namespace adaqp::cli {
namespace {

struct PartitionCommandOptions {
  JobOptions job;
  std::string out;
};

// Before the work (writing the partition checks again, against a writer that starts meanwhile).
void require_new_partition_dir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec))
    throw InputError(dir, "", "already exists; remove it or choose another partition directory");
}

// ptscotch: every rank of the job partitions its slice; rank 0 prints the summary.
void run_distributed_partition(Communicator& comm, JobConfig cfg, const std::string& out) {
  const std::string dir = out.empty() ? partition_dir(cfg) : out;
  run_step(comm, [&] {
    if (comm.rank() == 0) require_new_partition_dir(dir);
    if (cfg.partition.options.parts != comm.size()) {
      throw ConfigError(fmt::format(
          "partition.parts is {} but the job started {} MPI ranks: partition.method ptscotch makes "
          "one part per rank (mpirun -np {}, or srun -n {})",
          cfg.partition.options.parts, comm.size(), cfg.partition.options.parts,
          cfg.partition.options.parts));
    }
  });
  const double t0 = steady_now_s();
  const DistributedPartition made = run_watched(comm, kPtscotchWork, [&] {
    // Every rank writes meta.yaml: each records rank 0's listing of the dataset's files.
    std::optional<std::vector<DatasetFile>> listing;
    run_step(comm, [&] {
      if (comm.rank() == 0) listing = list_dataset_files(cfg.dataset.path);
    });
    cfg.partition.options.dataset_files = broadcast_dataset_files(comm, listing);
    run_step(comm, [&] {
      require_rank0s_dataset_copy(cfg.dataset.path, cfg.partition.options.dataset_files,
                                  comm.rank());
    });
    return partition_distributed(cfg.dataset, cfg.partition.options, dir, MPI_COMM_WORLD, comm,
                                 collective_step(comm));
  });
  if (comm.rank() == 0) {
    fmt::print("{}", partition_text(dir, made.meta));
    fmt::print("time         load, partition, build and write {:.3f} s on {} ranks\n",
               steady_now_s() - t0, comm.size());
  }
}

// The other methods: one process loads and partitions the whole graph and writes the directory.
void partition_alone(JobConfig cfg, const std::string& out) {
  const std::string dir = out.empty() ? partition_dir(cfg) : out;
  require_new_partition_dir(dir);
  const double t0 = steady_now_s();
  cfg.partition.options.dataset_files = list_dataset_files(cfg.dataset.path);
  const Graph g = load_dataset(cfg.dataset);
  require_training_nodes(static_cast<int64_t>(g.train.size()), cfg.dataset);
  require_features(g.feat_dim, cfg.dataset);
  const double t1 = steady_now_s();
  const PartitionMeta meta = write_partition(dir, g, cfg.partition.options);
  const double t2 = steady_now_s();
  fmt::print("{}", partition_text(dir, meta));
  fmt::print("time         load {:.3f} s, partition and write {:.3f} s\n", t1 - t0, t2 - t1);
}

// Under a launcher (mpirun -np N) every process reads the job, and an error in it is said once;
// outside ptscotch the job's first process partitions alone while the others wait for it (as long
// as it shows signs of life: comm/solo_work.h), so that every process ends with its status.
void run_partition(const PartitionCommandOptions& opt) {
  const std::unique_ptr<MpiSession> mpi = start_mpi();
  const std::unique_ptr<Communicator> comm =
      make_mpi_communicator(MPI_COMM_WORLD, kDefaultTimeoutS);
  JobConfig cfg;
  run_step(*comm, [&] {
    cfg = opt.job.load();
    setup_logging(comm->rank(), cfg.output.log_level);
  });
  comm->set_timeout(cfg.communication.timeout_s);
  mpi->set_end_timeout(cfg.communication.timeout_s);
  if (cfg.partition.options.method == PartitionMethod::kPtscotch)
    return run_distributed_partition(*comm, cfg, opt.out);
  run_step(*comm, [&] {
    SoloWork solo(*comm, 0, "partitioning the dataset");
    if (comm->rank() == 0) partition_alone(cfg, opt.out);
    solo.finish();
  });
}

}  // namespace

void add_partition_command(CLI::App& app) {
  auto opt = std::make_shared<PartitionCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "partition",
      "Partition the job's dataset (partition.*) and write the partition directory (method "
      "ptscotch: under mpirun or srun, one rank per part)");
  add_job_options(cmd, opt->job);
  cmd->add_option("-o,--out", opt->out,
                  "partition directory (must not exist); default: the job's partition.dir")
      ->check(non_empty_path());
  cmd->callback([opt] { run_partition(*opt); });
}

}  // namespace adaqp::cli
