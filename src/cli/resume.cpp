#include "resume.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>

#include "adaqp/common/choices.h"
#include "adaqp/common/error.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/epoch_loop.h"
#include "collective_step.h"
#include "train_options.h"

namespace adaqp::cli {
namespace {

// training.restore_best: the best epoch's parameters a checkpoint kept (`kept`), or its own where
// it records itself as its best epoch; a file written without restore_best has none of an earlier
// best epoch, and one written before the best epoch was recorded cannot say which it was.
// ConfigError where it has neither.
void require_best_of_checkpoint(const std::string& path, const CheckpointProgress& progress,
                                bool kept) {
  if (!progress.have_best || kept ||
      (progress.best_epoch_recorded && progress.best_epoch == progress.epoch))
    return;
  if (progress.best_epoch_recorded) {
    throw ConfigError(fmt::format(
        "--resume with training.restore_best: checkpoint {} (epoch {}) holds no parameters of its "
        "best validation epoch {}: it was written without training.restore_best; resume without "
        "it",
        path, progress.epoch, progress.best_epoch));
  } else {
    throw ConfigError(fmt::format(
        "--resume with training.restore_best: checkpoint {} (epoch {}) was written before "
        "checkpoints recorded their best validation epoch, and holds no parameters of it; resume "
        "without training.restore_best",
        path, progress.epoch));
  }
}

// require_best_of_checkpoint, then the best epoch's parameters into `best`.
void keep_best_of_checkpoint(const std::string& path, const CheckpointProgress& progress,
                             const Trainer& trainer, ModelSnapshot& best) {
  best.epoch = 0;
  const bool kept = !best.params.empty() && best.embedding.defined() == trainer.has_embedding();
  require_best_of_checkpoint(path, progress, kept);
  if (!progress.have_best) return;
  if (kept) {
    best.epoch = progress.best_epoch;
  } else {
    best = trainer.snapshot(progress.epoch);
  }
}

}  // namespace

std::string choose_checkpoint(const JobConfig& cfg) {
  const std::string dir = checkpoint_dir(cfg);
  const std::string path = latest_checkpoint(dir);
  if (path.empty()) throw ConfigError(fmt::format("--resume: no intact checkpoint in {}", dir));
  const CheckpointInfo info = read_checkpoint_info(path);
  check_job_header(path, info.header, job_checkpoint_header(cfg));
  // A metric named outright is known before the dataset is read: refused before a --repartition
  // replaces the partition (auto is resolved by the labels, and compared once they are read).
  if (cfg.training.metric != ScoreMetric::kAuto)
    check_checkpoint_metric(path, info.header.metric, to_string(cfg.training.metric));
  if (cfg.training.restore_best) require_best_of_checkpoint(path, info.progress, info.best_params);
  // A finished run resumed with output.predictions only writes its predictions (cmd_train.cpp),
  // by the parameters this job's training.restore_best asks for.
  RunOptions limits;
  limits.start = info.progress;
  limits.epochs = cfg.training.epochs;
  limits.patience = cfg.training.patience;
  limits.eval_every = cfg.training.eval_every;
  if (training_finished(limits) && !cfg.output.predictions) {
    const std::string why =
        limits.start.epoch >= limits.epochs
            ? fmt::format("training.epochs is {}", limits.epochs)
            : fmt::format("training.patience {} ends the run there (best validation at epoch {})",
                          limits.patience, limits.start.best_epoch);
    throw ConfigError(
        fmt::format("--resume: checkpoint {} is at epoch {} and {}: nothing left to train (with "
                    "output.predictions, the run's predictions would be written)",
                    path, limits.start.epoch, why));
  }
  metrics_kept_on_resume((std::filesystem::path(cfg.output.dir) / "metrics.jsonl").string(),
                         info.progress.epoch);
  return path;
}

void warn_keys_changed_since_run(const JobConfig& cfg) {
  const std::string path = (std::filesystem::path(cfg.output.dir) / "config.yaml").string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return;
  JobConfig run;
  try {
    run = load_job_config(path);
  } catch (const Error& e) {
    spdlog::warn("--resume: {} not compared with this job: {}", path, e.what());
    return;
  }
  const auto before = key_values(run);
  const auto now = key_values(cfg);
  std::string changed;
  for (size_t k = 0; k < now.size() && k < before.size(); ++k) {
    // Raising training.epochs is what a resume is for; output.* does not shape training.
    const std::string& key = now[k].first;
    if (key != "training.epochs" && key.rfind("output.", 0) != 0 &&
        before[k].second != now[k].second)
      changed += fmt::format("\n  {}: {} -> {}", key, before[k].second, now[k].second);
  }
  if (!changed.empty())
    spdlog::warn("--resume: keys changed since the run's {} was written:{}", path, changed);
}

void prepare_checkpoints(Communicator& comm, const JobConfig& cfg, const std::string& chosen,
                         bool resume, Trainer& trainer, RunOptions& ropt) {
  if (!resume) return;
  const std::string& dir = ropt.checkpoint_dir;
  int epoch = 0;
  int written_on = 0;  // workers of the job that wrote the checkpoint
  run_step(comm, [&] {
    if (comm.rank() != 0) return;
    const CheckpointInfo info = read_checkpoint_info(chosen);
    epoch = info.progress.epoch;
    written_on = info.header.world_size;
  });
  comm.broadcast(&epoch, sizeof epoch, 0);
  comm.broadcast(&written_on, sizeof written_on, 0);
  run_step(comm, [&] {
    const std::string path = checkpoint_path(dir, epoch);
    CheckpointHeader expected = ropt.checkpoint_header;
    expected.embedding = trainer.has_embedding();
    ModelSnapshot* best = ropt.restore_best ? &ropt.start_best : nullptr;
    ropt.start = load_checkpoint(path, expected, trainer.model(), trainer.optimizer(), best);
    // Each rank takes its nodes' learned rows from the files of the ranks that wrote them.
    if (expected.embedding) {
      const EmbeddingOrigin origin{expected.dataset_fingerprint, expected.seed, ropt.start.epoch};
      trainer.load_embedding(path, written_on, origin, best);
    }
    if (best != nullptr) keep_best_of_checkpoint(path, ropt.start, trainer, *best);
    if (comm.rank() != 0) return;
    spdlog::info("resuming from {} (epoch {})", path, ropt.start.epoch);
    if (written_on != comm.size()) {
      const bool adaptive =
          quantizes(cfg.communication.mode) && cfg.communication.scheme == BitScheme::kAdaptive;
      spdlog::info(
          "the checkpoint was written on {} workers and training continues on {}: parameters and "
          "optimizer state carry over{}",
          written_on, comm.size(),
          adaptive ? "; the adaptive scheme probes and traces afresh" : "");
    }
  });
}

}  // namespace adaqp::cli
