// adaqp train: distributed full-graph training, one process per worker, started by mpirun or srun.
//
// Start-up runs in steps; after each, the ranks agree whether any of them failed, and if so every
// rank exits non-zero while only the lowest failing rank reports its error, so a bad config or a
// mismatched partition gives one clear message and no hang. After start-up, an error on one rank
// is reported by that rank and ends the whole job (MPI_Abort): the others could not continue.
// With training.checkpoint_every, rank 0 writes checkpoints (train/checkpoint.h; every rank writes
// its learned featureless rows beside them); --resume continues from the newest intact one, on any
// number of workers, and reproduces the uninterrupted run (exactly on the same number of workers);
// --resume=auto does so where a checkpoint exists and starts afresh where none does.
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/make_communicator.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/mpi_error.h"
#include "adaqp/comm/mpi_session.h"
#include "adaqp/comm/solo_work.h"
#include "adaqp/common/affinity.h"
#include "adaqp/common/atomic_file.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/common/paths.h"
#include "adaqp/common/timeouts.h"
#include "adaqp/config.h"
#include "adaqp/config/job_config.h"
#include "adaqp/config/placement.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph.h"
#include "adaqp/partition/obtain_part.h"
#include "adaqp/partition/part_agreement.h"
#include "adaqp/partition/partition_dir.h"
#include "adaqp/partition/partition_in_slices.h"
#include "adaqp/quant/quantizer.h"
#include "adaqp/tensor/torch_cuda_backend.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/epoch_loop.h"
#include "adaqp/train/memory_meter.h"
#include "adaqp/train/predictions.h"
#include "adaqp/train/roc_auc.h"
#include "adaqp/train/trainer.h"
#include "collective_step.h"
#include "commands.h"
#include "job_dataset_files.h"
#include "job_options.h"
#include "mpi_launch.h"
#include "output_lock.h"
#include "rank_placement.h"
#include "resume.h"
#include "same_job.h"
#include "train_options.h"

namespace adaqp::cli {
namespace {

void create_dirs(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), "", "cannot create directory: " + ec.message());
}

// Whether the run's checkpoints go to a directory of their own that the lock on output.dir does
// not cover (training.checkpoint_dir outside output.dir), which is then locked too.
bool separate_checkpoint_dir(const JobConfig& cfg) {
  return cfg.training.checkpoint_every > 0 && !lies_within(checkpoint_dir(cfg), cfg.output.dir);
}

// The partition directory is replaced whole (--repartition): nothing the run keeps may lie in it.
void require_outside_partition(const JobConfig& cfg) {
  const std::string part = partition_dir(cfg);
  const std::pair<std::string, std::string> kept[] = {
      {"output.dir", cfg.output.dir}, {"training.checkpoint_dir", checkpoint_dir(cfg)}};
  for (const auto& [key, dir] : kept) {
    if (lies_within(dir, part)) {
      throw ConfigError(fmt::format(
          "{} = {} lies inside partition.dir = {}, which --repartition replaces whole: choose a "
          "directory outside it",
          key, dir, part));
    }
  }
}

// Removes dir/name and the temporary files of its writers (AtomicFile), if any; InputError naming
// a file that cannot be removed.
void remove_output(const std::filesystem::path& dir, const std::string& name) {
  namespace fs = std::filesystem;
  const std::string temp_prefix = name + AtomicFile::kTempInfix;
  std::vector<fs::path> paths{dir / name};
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(temp_prefix, 0) == 0) paths.push_back(e.path());
  }
  if (ec) throw InputError(dir.string(), "", "cannot list: " + ec.message());
  for (const fs::path& p : paths) {
    fs::remove(p, ec);
    if (ec) throw InputError(p.string(), "", "cannot remove: " + ec.message());
  }
}

// ConfigError naming `key` unless `dir` is a writable directory or could be made one (its nearest
// existing ancestor is a writable directory). Leaves nothing behind (a job that a later check
// stops has made no directory): the ancestor is tried with a probe directory, removed at once.
void require_creatable(const std::filesystem::path& dir, const std::string& key) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto refuse = [&](const std::string& why) {
    throw ConfigError(fmt::format("{} = {}: cannot create directory: {}", key, dir.string(), why));
  };
  fs::path p = directory_path(fs::absolute(dir, ec));
  if (p.string().size() >= PATH_MAX) refuse(fmt::format("longer than {} bytes", PATH_MAX - 1));
  for (const fs::path& part : p) {
    if (part.string().size() > NAME_MAX)
      refuse(fmt::format("a name of {} bytes (at most {})", part.string().size(), NAME_MAX));
  }
  while (!fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) {
    if (fs::is_symlink(fs::symlink_status(p, ec)))
      refuse(fmt::format("{} is a symbolic link to {}, which does not exist", p.string(),
                         fs::read_symlink(p, ec).string()));
    p = p.parent_path();
  }
  if (!fs::is_directory(p, ec)) refuse(p.string() + " is not a directory");
  // Permissions do not tell (root may write anywhere, yet not make a directory in /proc): a
  // directory is made there and removed.
  std::string probe = (p / ".adaqp-probe-XXXXXX").string();
  if (::mkdtemp(probe.data()) == nullptr) refuse(p.string() + ": " + std::strerror(errno));
  ::rmdir(probe.c_str());
}

// "the dataset PATH (split: T train, V validation, S test nodes)": `split` is the whole dataset's.
std::string split_text(const JobConfig& cfg, const std::array<int64_t, 3>& split) {
  return fmt::format("the dataset {}(split: {} train, {} validation, {} test nodes)",
                     cfg.dataset.path.empty() ? "" : cfg.dataset.path + " ", split[0], split[1],
                     split[2]);
}

// "patience = N" or "restore_best = true": the key that chooses an epoch by its validation score;
// empty where none does.
std::string best_epoch_key(const JobConfig& cfg) {
  if (cfg.training.patience > 0) return fmt::format("patience = {}", cfg.training.patience);
  return cfg.training.restore_best ? "restore_best = true" : "";
}

// The best epoch is the one of best validation accuracy: without validation nodes every epoch
// scores 0, and the first would be kept, or stopped after. Checked before partitioning (the whole
// dataset's counts) and again on the partition's.
void require_validation_for_best(const JobConfig& cfg, const std::array<int64_t, 3>& split) {
  if (split[1] > 0 || best_epoch_key(cfg).empty()) return;
  throw ConfigError(fmt::format(
      "training.{}: chooses an epoch by its validation score, and {} has no validation nodes",
      best_epoch_key(cfg), split_text(cfg, split)));
}

// Rank 0 loads the dataset and partitions it into the job's partition directory (`replace`:
// the directory exists and is replaced, --repartition; `resume_from`: the checkpoint a --resume
// continues from, or empty). `output_lock`: output.dir's, taken here where making the partition's
// parent makes output.dir (the default partition.dir), so that a job started meanwhile stops at it
// rather than this one at its own.
void create_partition(const JobConfig& cfg, const std::string& dir, bool replace,
                      const std::string& resume_from, std::optional<OutputLock>& output_lock) {
  spdlog::info("partition {}{}: partitioning the dataset into {} parts", dir,
               replace ? " to be replaced (--repartition)" : " does not exist",
               cfg.partition.options.parts);
  const Graph g = load_dataset(cfg.dataset);
  // Before any write: a job that cannot train on this dataset leaves no partition.
  require_training_nodes(static_cast<int64_t>(g.train.size()), cfg.dataset);
  require_validation_for_best(
      cfg, {static_cast<int64_t>(g.train.size()), static_cast<int64_t>(g.valid.size()),
            static_cast<int64_t>(g.test.size())});
  require_features(g.feat_dim, cfg.dataset);
  require_relations(cfg, g.relations.size());
  require_metric_fits(cfg, g.multilabel);
  require_classes(g.num_classes, g.multilabel, dataset_name(cfg.dataset), "labels");
  require_recompute_effect(cfg, g.num_classes);
  // A resume refused for its dataset must leave the partition of the run it meant to continue.
  if (replace && !resume_from.empty()) {
    const CheckpointHeader found = read_checkpoint_info(resume_from).header;
    const std::string job = fingerprint(g);
    if (found.dataset_fingerprint != job) {
      throw InputError(resume_from, "dataset fingerprint",
                       fmt::format("checkpoint has {}, this job has {} ({} left as it was)",
                                   found.dataset_fingerprint, job, dir));
    }
    // training.metric auto is resolved only now, by the labels (choose_checkpoint compared a
    // metric named outright).
    check_checkpoint_metric(resume_from, found.metric,
                            to_string(resolve_score_metric(cfg.training.metric, g.multilabel)));
    const bool embedding =
        cfg.model.featureless == FeaturelessInput::kEmbedding && g.has_featureless_type();
    if (found.embedding != embedding) {
      throw InputError(resume_from, "learned featureless rows (model.featureless = embedding)",
                       fmt::format("checkpoint has {}, this job has {} ({} left as it was)",
                                   found.embedding, embedding, dir));
    }
  }
  const std::filesystem::path parent = directory_path(dir).parent_path();
  // The directories made here (output.dir, the default partition.dir's parent) go again when the
  // partitioning fails: a job stopped before training leaves no output.dir.
  std::vector<std::filesystem::path> made;
  for (std::filesystem::path p = parent; !p.empty() && !std::filesystem::exists(p);
       p = p.parent_path()) {
    made.push_back(p);
  }
  if (!parent.empty()) create_dirs(parent);
  const std::filesystem::path output(cfg.output.dir);
  std::error_code ec;
  const bool locks_output =
      !output_lock && std::any_of(made.begin(), made.end(), [&](const std::filesystem::path& p) {
        return std::filesystem::equivalent(p, output, ec);
      });
  PartitionMeta meta;
  try {
    if (locks_output) output_lock.emplace(cfg.output.dir, "output.dir");
    meta = replace ? replace_partition(dir, g, cfg.partition.options)
                   : write_partition(dir, g, cfg.partition.options);
  } catch (...) {
    if (locks_output && output_lock) {
      output_lock.reset();
      std::filesystem::remove(output / OutputLock::kFileName, ec);
    }
    for (const std::filesystem::path& p : made) std::filesystem::remove(p, ec);
    throw;
  }
  spdlog::info("wrote partition {}: {} nodes, {} edges, edge cut {}", dir, meta.num_nodes,
               meta.num_edges, meta.edge_cut);
}

// A directory that did not exist at start-up is locked only once the job has made it: a job
// started later may have written into it meanwhile (and finished, its lock gone). Its output stays:
// this job stops. `output_late`, `checkpoints_late`: output.dir, the checkpoints' directory (of a
// run that starts afresh) locked only now; where locked at start-up, what they held then is this
// job's to replace or continue.
void require_no_rival_output(const JobConfig& cfg, bool output_late, bool checkpoints_late) {
  const std::filesystem::path dir(cfg.output.dir);
  std::error_code ec;
  for (const char* name : {"config.yaml", "metrics.jsonl", "params.bin"}) {
    if (output_late && std::filesystem::exists(dir / name, ec)) {
      throw ConfigError(fmt::format(
          "output.dir = {}: another job wrote {} there after this one started (the directory did "
          "not exist then); choose another output.dir",
          cfg.output.dir, name));
    }
  }
  if (!checkpoints_late) return;
  const std::vector<int> checkpoints = list_checkpoints(checkpoint_dir(cfg));
  if (!checkpoints.empty()) {
    throw ConfigError(fmt::format(
        "training.checkpoint_dir = {}: another job wrote checkpoints there after this one started "
        "(newest: epoch {}); choose another output.dir or training.checkpoint_dir",
        checkpoint_dir(cfg), checkpoints.front()));
  }
}

// The partition's split: refused as require_validation_for_best says, warned of where a score
// would read 0. The counts are the whole dataset's, the same on every rank.
void check_splits(const JobConfig& cfg, const Part& part, int rank) {
  const std::array<int64_t, 3> split = {part.global_split_counts[0], part.global_split_counts[1],
                                        part.global_split_counts[2]};
  require_validation_for_best(cfg, split);
  const std::string dataset = split_text(cfg, split);
  if (rank != 0) return;
  if (split[1] == 0) {
    spdlog::warn(
        "{} has no validation nodes: the validation score reads 0, and the summary's best "
        "epoch is the first",
        dataset);
  }
  if (split[2] == 0) spdlog::warn("{} has no test nodes: the test score reads 0", dataset);
}

// Collective. Under training.metric rocauc a split's score is the mean over the tasks holding both
// classes among its nodes: a split of nodes but no such task scores 0, as a split without nodes
// does (check_splits), so the same keys are refused and the same warning given.
void check_rocauc_tasks(Communicator& comm, const JobConfig& cfg, const Part& part,
                        bool multilabel) {
  if (resolve_score_metric(cfg.training.metric, multilabel) != ScoreMetric::kRocAuc) return;
  const std::array<int64_t, 3> defined =
      defined_tasks(comm, part.multilabels.data(), part.num_classes,
                    {&part.train_idx, &part.valid_idx, &part.test_idx});
  const std::vector<int64_t>& split = part.global_split_counts;
  if (split[1] > 0 && defined[1] == 0 && !best_epoch_key(cfg).empty()) {
    throw ConfigError(fmt::format(
        "training.{}: chooses an epoch by its validation score, and no task holds both classes "
        "among the dataset's {} validation nodes: training.metric rocauc averages those tasks, so "
        "every epoch would score 0",
        best_epoch_key(cfg), split[1]));
  }
  if (comm.rank() != 0) return;
  const char* names[3] = {"training", "validation", "test"};
  for (int k = 0; k < 3; ++k) {
    if (split[k] > 0 && defined[k] == 0) {
      spdlog::warn(
          "no task holds both classes among the dataset's {} {} nodes: their ROC-AUC, the mean "
          "over such tasks, reads 0",
          split[k], names[k]);
    }
  }
}

// Runs a step after start-up. An error on one rank ends the whole job (MPI_Abort): the others could
// not continue. A NumericalError (divergence) is raised identically on every rank, so rank 0
// reports it and every rank exits non-zero without aborting. A divergence the codec meets
// (quant::NonFiniteError) is met by each rank whose messages diverged, without an agreement: rank 0
// reports it at once, the others only if the job still runs a moment later (kLateReportS, at most
// half the timeout, so that the ranks waiting for their messages do not time out first). Memory
// running out (the model's sizes, met by every rank), and a CommError (a peer stopped or gone, met
// by every rank waiting for it), are reported the same way, as one line.
template <typename Step>
void run_guarded(const Communicator& comm, Step&& step) {
  const int rank = comm.rank();
  const auto late_report = std::min<std::chrono::duration<double>>(
      kLateReportS, std::chrono::duration<double>(comm.timeout() / 2));
  try {
    step();
  } catch (const NumericalError&) {
    if (rank == 0) throw;
    throw CLI::RuntimeError(1);
  } catch (const quant::NonFiniteError& e) {
    if (rank != 0) std::this_thread::sleep_for(late_report);
    std::fprintf(stderr, "adaqp: error on %s: %s\n", rank_and_host(rank).c_str(), e.what());
    abort_job(1);
  } catch (const InvariantError&) {
    abort_job(report_error(std::current_exception(), rank_and_host(rank)));  // a bug: status 2
  } catch (const CommError& e) {
    // A peer stopped, cut off or gone: the ranks waiting for it meet it at about the same time.
    // Rank 0 reports it; the others only if the job still runs a moment later.
    if (rank != 0) std::this_thread::sleep_for(late_report);
    std::fprintf(stderr, "adaqp: error on %s: %s\n", rank_and_host(rank).c_str(),
                 one_line_message(e));
    abort_job(1);
  } catch (const std::exception& e) {
    if (out_of_memory(e)) {
      if (rank != 0) std::this_thread::sleep_for(late_report);
      abort_job(report_error(std::current_exception(), rank_and_host(rank)));
    }
    std::fprintf(stderr, "adaqp: error on %s: %s\n", rank_and_host(rank).c_str(),
                 one_line_message(e));
    abort_job(1);
  }
}

std::unique_ptr<Trainer> make_trainer(Communicator& comm, const JobConfig& cfg,
                                      const LocalRanks& local, const Placement& placement,
                                      Part part) {
  const int threads = compute_threads(cfg.training, local);
  set_compute_threads(threads);
  spdlog::info("rank {}: {} owned, {} halo nodes; {} compute thread(s) on CPUs {}", comm.rank(),
               part.num_owned(), part.num_halo(), threads, process_affinity().cpus);
  auto trainer =
      std::make_unique<Trainer>(std::move(part), comm, trainer_options(cfg, placement.device));
  if (comm.rank() == 0) {
    spdlog::info("model {} ({} layers, hidden {}): {} parameters", to_string(cfg.model.type),
                 cfg.model.layers, cfg.model.hidden, trainer->num_parameters());
  }
  return trainer;
}

// Trains over `comm`; with output.predictions, rank 0 then gathers every node's prediction over
// `host` (MPI, host buffers, whatever the device), before the summary record. A finished run
// resumed with output.predictions (resume.cpp) trains nothing and leaves its metrics.jsonl and
// params.bin as they are.
void train(Communicator& comm, Communicator& host, const JobConfig& cfg, Trainer& trainer,
           RunOptions ropt) {
  const std::filesystem::path dir(cfg.output.dir);
  const bool finished = training_finished(ropt);
  if (cfg.output.predictions) {
    ropt.write_outputs = [&] {
      const Part& part = trainer.part();
      write_node_rows(host, part.owned_gid, part.global_num_nodes, trainer.predict(),
                      (dir / "predictions.npy").string());
    };
  }
  RunSummary s;
  // Training writes the predictions before its summary record, and puts the best epoch's
  // parameters back itself.
  if (!finished) s = train_epochs(trainer, comm, ropt);
  if (finished && ropt.start_best.epoch > 0) trainer.restore(ropt.start_best);
  if (finished && ropt.write_outputs) {
    SoloWork solo(comm, 0, "writing the run's outputs");  // as train_epochs writes them
    ropt.write_outputs();
    solo.finish();
  }
  if (comm.rank() != 0) return;
  const std::string predictions =
      cfg.output.predictions ? "\npredictions: " + (dir / "predictions.npy").string() : "";
  if (finished) {
    const int params_epoch = ropt.start_best.epoch > 0 ? ropt.start_best.epoch : ropt.start.epoch;
    spdlog::info(
        "training had finished at epoch {}: nothing trained{}{}", ropt.start.epoch, predictions,
        cfg.output.predictions ? fmt::format(" (epoch {}'s parameters)", params_epoch) : "");
  } else {
    spdlog::info("{}\nmetrics: {}{}", describe(s), (dir / "metrics.jsonl").string(), predictions);
  }
}

void run_train_job(const std::unique_ptr<Communicator>& comm, const JobOptions& job,
                   ResumeMode resume_mode, bool repartition,
                   const TransportWrapper& wrap_transport) {
  const int rank = comm->rank(), world = comm->size();
  const LocalRanks local = local_ranks();  // collective: before any step that may fail

  JobConfig cfg;
  std::string dir;
  bool must_partition = false, replace = false, resume = resume_mode == ResumeMode::kAlways;
  Placement placement;
  // Rank 0's, until the process ends: taken before anything is written into an existing output.dir
  // (its default partition directory included), else once the job makes it; the same for a
  // checkpoint directory outside it.
  std::optional<OutputLock> output_lock, checkpoint_lock;
  bool output_existed = false;  // rank 0's: output.dir existed at start-up (and was locked then)
  std::string resume_from;      // rank 0's: the checkpoint a --resume continues from
  run_step(*comm, [&] {
    cfg = job.load();
    setup_logging(rank, cfg.output.log_level);
    comm->set_timeout(cfg.communication.timeout_s);
    placement = place(rank, local, cfg);
    require_threads_within_host(cfg.training.threads, process_affinity());
    if (!placement.warning.empty() && local.rank == 0) spdlog::warn("{}", placement.warning);
    dir = partition_dir(cfg);
    if (rank == 0) {
      require_outside_partition(cfg);
      std::error_code ec;
      const bool exists = std::filesystem::exists(dir, ec);
      if (ec) throw InputError(dir, "", "cannot access: " + ec.message());
      replace = exists && repartition;
      must_partition = !exists || replace;
      if (replace && cfg.partition.options.method == PartitionMethod::kPtscotch) {
        throw ConfigError(fmt::format(
            "--repartition with partition.method = ptscotch: every rank writes its own part, so "
            "{} cannot be swapped in one step; remove it, or choose another partition.dir",
            dir));
      }
      // Recorded in a new partition, compared with an existing one's record.
      cfg.partition.options.dataset_files = list_dataset_files(cfg.dataset.path);
      // An existing partition must be the one the job asks for (never a silent reuse).
      if (exists && !replace) {
        const PartitionMeta meta = read_partition_meta(dir);
        require_partition_matches(meta, cfg.partition.options, dir);
        int64_t train = 0;
        for (const PartCounts& c : meta.counts) train += c.train;
        if (train == 0) {
          throw InputError(partition_meta_path(dir), "counts",
                           "no part holds a training node: training needs labelled training "
                           "nodes");
        }
      }
      if (must_partition && cfg.partition.options.parts != world) {
        throw ConfigError(fmt::format(
            "partition.parts is {} but the job started {} worker{} (partition {} does not exist "
            "yet): {}set partition.parts={}",
            cfg.partition.options.parts, world, world == 1 ? "" : "s", dir,
            world == 1 ? fmt::format("start it with mpirun -np {} (it ran without mpirun?), or ",
                                     cfg.partition.options.parts)
                       : "",
            world));
      }
      require_creatable(cfg.output.dir, "output.dir");
      output_existed = std::filesystem::is_directory(cfg.output.dir);
      if (output_existed) output_lock.emplace(cfg.output.dir, "output.dir");
      std::error_code listed;
      if (separate_checkpoint_dir(cfg) &&
          std::filesystem::is_directory(checkpoint_dir(cfg), listed))
        checkpoint_lock.emplace(checkpoint_dir(cfg), "training.checkpoint_dir");
      // Before the partition is made: a resume without a checkpoint has nothing to continue.
      const bool have_checkpoints = !list_checkpoints(checkpoint_dir(cfg)).empty();
      if (resume_mode == ResumeMode::kAuto) {
        resume = have_checkpoints;
        if (!resume) {
          spdlog::info(
              "--resume=auto: no checkpoint in {} (training.checkpoint_dir): training "
              "starts from epoch 1",
              checkpoint_dir(cfg));
        }
      }
      // A new run must not leave an earlier run's checkpoints beside its own output, even one
      // that writes none: a later --resume would continue that run over this one's metrics.
      if (!resume && have_checkpoints) {
        throw ConfigError(fmt::format(
            "{} already holds checkpoints (newest: epoch {}) of an earlier run: pass --resume to "
            "continue that run, remove them, or set training.checkpoint_dir (or output.dir) to "
            "another directory",
            checkpoint_dir(cfg), list_checkpoints(checkpoint_dir(cfg)).front()));
      }
      if (resume && !have_checkpoints) {
        const bool file = std::filesystem::exists(checkpoint_dir(cfg)) &&
                          !std::filesystem::is_directory(checkpoint_dir(cfg));
        throw ConfigError(fmt::format("--resume: {} {} (training.checkpoint_dir)",
                                      file ? "not a directory:" : "no checkpoint in",
                                      checkpoint_dir(cfg)));
      }
      // Before the partition is made or replaced (--repartition), as far as the configuration
      // alone decides; the rest once the data is read (prepare_checkpoints).
      if (resume) {
        resume_from = choose_checkpoint(cfg);
        warn_keys_changed_since_run(cfg);
      }
      // Found now, not when the first checkpoint is due.
      if (cfg.training.checkpoint_every > 0)
        require_creatable(checkpoint_dir(cfg), "training.checkpoint_dir");
      // The keys set, not all of them: config.yaml holds every key once training starts.
      std::string changed;
      for (const auto& [key, value] : changed_key_values(cfg))
        changed += fmt::format("\n  {}: {}", key, value);
      spdlog::info("adaqp train on {} worker(s), {} (every key: {}/config.yaml){}", world,
                   changed.empty() ? "every key at its default" : "keys other than their defaults",
                   cfg.output.dir, changed);
      spdlog::debug("effective configuration:\n{}", to_yaml(cfg));
    }
  });

  run_step(*comm, [&] {
    const char* resume_text = resume_mode == ResumeMode::kNo     ? "not given"
                              : resume_mode == ResumeMode::kAuto ? "auto"
                                                                 : "always";
    require_same_job(
        *comm, cfg,
        {{"--resume", resume_text}, {"--repartition", repartition ? "given" : "not given"}});
  });
  // Rank 0's view of the file system decides, so all ranks take the same steps.
  comm->broadcast(&must_partition, sizeof(must_partition), 0);
  comm->broadcast(&replace, sizeof(replace), 0);
  comm->broadcast(&resume, sizeof(resume), 0);
  agree_on_device(*comm, placement);
  if (placement.device.is_cuda()) run_step(*comm, [] { load_torch_cuda_backend(); });
  if (rank == 0 && cfg.training.precision == ComputePrecision::kTf32 && !placement.device.is_cuda())
    spdlog::warn("training.precision = tf32 has no effect: the job trains on the CPU ({})",
                 placement.reason);
  // Peak memory by phase (the device's once its communicator and context exist).
  MemoryMeter meter;
  PhasePeaks memory;
  PhaseSeconds seconds{};
  double phase_start_s = steady_now_s();
  meter.start();
  // partition.method ptscotch: every rank takes part and keeps the part it built.
  std::optional<DistributedPartition> made;
  if (must_partition) {
    if (cfg.partition.options.method == PartitionMethod::kPtscotch) {
      if (rank == 0) {
        spdlog::info(
            "partition {} does not exist: partitioning the dataset into {} parts with "
            "ptscotch on all {} ranks",
            dir, cfg.partition.options.parts, world);
      }
      made = run_watched(*comm, kPtscotchWork, [&] {
        // Every rank writes meta.yaml: each records rank 0's listing of the dataset's files.
        cfg.partition.options.dataset_files =
            broadcast_dataset_files(*comm, cfg.partition.options.dataset_files);
        run_step(*comm, [&] {
          require_rank0s_dataset_copy(cfg.dataset.path, cfg.partition.options.dataset_files, rank);
        });
        // Slices carry no relations (a typed dataset is refused by the slice readers).
        return partition_distributed(
            cfg.dataset, cfg.partition.options, dir, MPI_COMM_WORLD, *comm, collective_step(*comm),
            [&](const GraphSlice& s, const std::array<int64_t, 3>& split) {
              require_validation_for_best(cfg, split);
              require_relations(cfg, 0);
              require_metric_fits(cfg, s.multilabel);
              require_classes(s.num_classes, s.multilabel, dataset_name(cfg.dataset), "labels");
              require_recompute_effect(cfg, s.num_classes);
            });
      });
    } else {
      run_step(*comm, [&] {
        SoloWork solo(*comm, 0, "partitioning the dataset");
        if (rank == 0) create_partition(cfg, dir, replace, resume_from, output_lock);
        solo.finish();
      });
    }
  }
  memory[static_cast<int>(Phase::kPartition)] = meter.peak();
  seconds[static_cast<int>(Phase::kPartition)] = steady_now_s() - phase_start_s;
  phase_start_s = steady_now_s();

  meter.start();
  Part part;
  PartitionMeta meta;
  if (made) {
    part = std::move(made->part);
    meta = std::move(made->meta);
    spdlog::info("rank {}: part built from the graph's slices", rank);
  } else {
    PartDistributionOptions distribution;
    distribution.mode = cfg.partition.distribute;
    distribution.cache_dir = part_cache_dir(cfg);
    ObtainedPart got = obtain_part(*comm, dir, distribution, collective_step(*comm));
    part = std::move(got.part);
    meta = std::move(got.meta);
    spdlog::info("rank {}: part {} ({})", rank, got.source, got.path);
  }
  made.reset();
  run_step(*comm, [&] { check_parts_agree(*comm, part, dir); });
  run_step(*comm, [&] {
    require_recompute_effect(cfg, meta.num_classes);
    require_classes(meta.num_classes, meta.multilabel, partition_meta_path(dir), "num_classes");
    require_relations(cfg, meta.relations.size());
    require_metric_fits(cfg, meta.multilabel);
    check_splits(cfg, part, rank);
  });
  run_step(*comm, [&] { check_rocauc_tasks(*comm, cfg, part, meta.multilabel); });
  const std::string fingerprint = meta.dataset_fingerprint;
  if (rank == 0) {
    spdlog::info("partition {}: dataset {}, {} nodes, {} parts, edge cut {}", dir,
                 meta.dataset_name, meta.num_nodes, meta.parts, meta.edge_cut);
  }

  // The device's transport.
  std::unique_ptr<Communicator> device_comm;
  if (placement.backend != Backend::kMpi) {
    run_step(*comm, [&] {
      device_comm = make_communicator(placement.backend, MPI_COMM_WORLD, placement.device.index,
                                      cfg.communication.timeout_s);
    });
  }
  Communicator& transport = device_comm != nullptr ? *device_comm : *comm;
  const std::unique_ptr<Communicator> wrapped =
      wrap_transport ? wrap_transport(transport) : nullptr;
  Communicator& job_comm = wrapped != nullptr ? *wrapped : transport;
  if (rank == 0) {
    spdlog::info("training on {} over {} ({})", placement.device.name(),
                 to_string(placement.backend), placement.reason);
  }

  memory[static_cast<int>(Phase::kLoad)] = meter.peak();
  seconds[static_cast<int>(Phase::kLoad)] = steady_now_s() - phase_start_s;
  phase_start_s = steady_now_s();

  meter.set_device(placement.device);
  meter.start();
  std::unique_ptr<Trainer> trainer;
  run_guarded(job_comm,
              [&] { trainer = make_trainer(job_comm, cfg, local, placement, std::move(part)); });
  memory[static_cast<int>(Phase::kStartup)] = meter.peak();
  seconds[static_cast<int>(Phase::kStartup)] = steady_now_s() - phase_start_s;
  RunOptions ropt = run_options(job_comm, cfg, *trainer, fingerprint);
  ropt.memory = memory;
  ropt.memory_resets = meter.resets();
  ropt.seconds = seconds;
  prepare_checkpoints(job_comm, cfg, resume_from, resume, *trainer, ropt);
  // Once every check has passed: a job stopped before training leaves no config.yaml (and a failed
  // resume does not replace the one of the run it meant to continue). An earlier run's
  // predictions.npy goes (and what a killed writer left of one): it would not be this run's; so
  // does its params.bin unless this is a finished run resumed for its predictions, before
  // config.yaml: one that cannot be replaced (immutable, a mount point) stops the job here rather
  // than after training.
  run_step(*comm, [&] {
    if (rank != 0) return;
    create_dirs(cfg.output.dir);
    const bool output_late = !output_existed;
    const bool checkpoints_late =
        separate_checkpoint_dir(cfg) ? !checkpoint_lock.has_value() : output_late;
    if (!output_lock) output_lock.emplace(cfg.output.dir, "output.dir");
    if (separate_checkpoint_dir(cfg) && !checkpoint_lock) {
      create_dirs(checkpoint_dir(cfg));
      checkpoint_lock.emplace(checkpoint_dir(cfg), "training.checkpoint_dir");
    }
    require_no_rival_output(cfg, output_late, checkpoints_late && !resume);
    // What a run killed while writing these left (the checkpoints' are removed where they are).
    for (const char* name :
         {"config.yaml", "metrics.jsonl", "params.json", "params.bin", "predictions.npy"})
      remove_stale_temporaries(cfg.output.dir, std::string(name) + AtomicFile::kTempInfix);
    // Training writes metrics.jsonl in place: one that refuses writing (read-only, immutable), or
    // that is not a file (a directory; a FIFO, whose open would wait for a reader), stops the job
    // here, before config.yaml replaces the earlier run's.
    const std::string metrics = (std::filesystem::path(cfg.output.dir) / "metrics.jsonl").string();
    require_metrics_file(metrics);
    if (::access(metrics.c_str(), F_OK) == 0 && ::access(metrics.c_str(), W_OK) != 0)
      throw InputError(metrics, "", std::string("cannot be written: ") + std::strerror(errno));
    if (!resume && std::filesystem::exists(metrics))
      spdlog::warn(
          "output.dir {} holds an earlier run's outputs: this run replaces its metrics.jsonl, "
          "config.yaml, params.bin, params.json and predictions.npy (--resume continues a run "
          "from its checkpoints)",
          cfg.output.dir);
    remove_output(cfg.output.dir, "predictions.npy");
    // A finished run resumed for its predictions keeps the run's params.bin and config.yaml (the
    // configuration its metrics.jsonl was trained under), as it keeps its metrics.
    const bool predictions_only = resume && training_finished(ropt);
    if (!predictions_only) {
      remove_output(cfg.output.dir, "params.json");
      remove_output(cfg.output.dir, "params.bin");
      AtomicFile::write_text((std::filesystem::path(cfg.output.dir) / "config.yaml").string(),
                             to_yaml(cfg));
    }
  });
  run_guarded(job_comm, [&] { train(job_comm, *comm, cfg, *trainer, std::move(ropt)); });
}

void train_job(const JobOptions& job, ResumeMode resume_mode, bool repartition,
               const TransportWrapper& wrap_transport) {
  const std::unique_ptr<MpiSession> mpi = start_mpi();
  const std::unique_ptr<Communicator> comm =
      make_mpi_communicator(MPI_COMM_WORLD, kDefaultTimeoutS);
  try {
    run_train_job(comm, job, resume_mode, repartition, wrap_transport);
    mpi->set_end_timeout(comm->timeout());
  } catch (const CommError&) {
    // A collective outside the steps (rank 0's choices broadcast, say) that a stopped or cut-off
    // peer never joined: the job ends here, before MPI's end would wait for that peer.
    end_job_on_comm_error(*comm, std::current_exception());
  }
}

}  // namespace

void add_train_command(CLI::App& app, const TransportWrapper& wrap_transport) {
  auto job = std::make_shared<JobOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "Train the job's model on its partitioned dataset; start one process per worker with "
      "mpirun or srun (partitions the dataset first when partition.dir does not exist)");
  add_job_options(cmd, *job);
  auto resume = std::make_shared<std::string>();
  // An option of at most one value, not a flag with a default value: CLI11 shows such a flag in the
  // help as "--resume{always} :{always,auto}".
  CLI::Option* resume_option =
      cmd->add_option(
             "--resume", *resume,
             "continue from the newest intact checkpoint in the checkpoint directory "
             "(training.checkpoint_dir), on any number of workers; the job must match its "
             "dataset, model and seed (--resume=always: the same). --resume=auto continues where "
             "a checkpoint exists and starts from epoch 1 where none does (a job that its "
             "scheduler may requeue)")
          ->expected(0, 1)
          ->check(CLI::IsMember({"always", "auto"}))
          ->option_text("[=always|auto]")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  auto repartition = std::make_shared<bool>(false);
  cmd->add_flag("--repartition", *repartition,
                "partition the dataset again into partition.dir even if it exists (its partition "
                "is replaced in one step once the new one is written); without it an existing "
                "partition.dir made from another dataset (dataset.* keys, its files) or with other "
                "partition.* keys is an error");
  cmd->callback([job, resume, resume_option, repartition, wrap_transport] {
    const ResumeMode mode = resume_option->count() == 0 ? ResumeMode::kNo
                            : *resume == "auto"         ? ResumeMode::kAuto
                                                        : ResumeMode::kAlways;
    train_job(*job, mode, *repartition, wrap_transport);
  });
}

}  // namespace adaqp::cli
