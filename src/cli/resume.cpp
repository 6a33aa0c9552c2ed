#include "resume.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/epoch_loop.h"
#include "collective_step.h"

namespace adaqp::cli {

void prepare_checkpoints(Communicator& comm, const JobConfig& cfg, bool resume, Trainer& trainer,
                         RunOptions& ropt) {
  const std::string& dir = ropt.checkpoint_dir;
  int epoch = 0;
  int written_on = 0;  // workers of the job that wrote the checkpoint
  run_step(comm, [&] {
    if (comm.rank() != 0) return;
    if (!resume) {
      const std::vector<int> old = list_checkpoints(dir);
      if (cfg.training.checkpoint_every > 0 && !old.empty()) {
        throw ConfigError(fmt::format(
            "{} already holds checkpoints (newest: epoch {}): pass --resume to continue that run, "
            "or set training.checkpoint_dir (or output.dir) to another directory",
            dir, old.front()));
      }
      return;
    }
    const std::string path = latest_checkpoint(dir);
    if (path.empty()) throw ConfigError(fmt::format("--resume: no intact checkpoint in {}", dir));
    const CheckpointInfo info = read_checkpoint_info(path);
    epoch = info.progress.epoch;
    written_on = info.header.world_size;
    // Found here, in a step that stops every rank, not once training has begun.
    metrics_kept_on_resume((std::filesystem::path(cfg.output.dir) / "metrics.jsonl").string(),
                           epoch);
  });
  if (!resume) return;
  comm.broadcast(&epoch, sizeof epoch, 0);
  comm.broadcast(&written_on, sizeof written_on, 0);
  run_step(comm, [&] {
    const std::string path = checkpoint_path(dir, epoch);
    CheckpointHeader expected = ropt.checkpoint_header;
    expected.embedding = trainer.has_embedding();
    ropt.start = load_checkpoint(path, expected, trainer.model(), trainer.optimizer());
    // Each rank takes its nodes' learned rows from the files of the ranks that wrote them.
    if (expected.embedding) trainer.load_embedding(path, written_on);
    // A finished run resumed with output.predictions only writes its predictions (cmd_train.cpp).
    if (ropt.start.epoch >= cfg.training.epochs && !cfg.output.predictions) {
      throw ConfigError(fmt::format(
          "--resume: checkpoint {} is at epoch {} and training.epochs is {}: nothing left to train "
          "(with output.predictions, the run's predictions would be written)",
          path, ropt.start.epoch, cfg.training.epochs));
    }
    if (comm.rank() != 0) return;
    spdlog::info("resuming from {} (epoch {})", path, ropt.start.epoch);
    if (written_on != comm.size()) {
      spdlog::info(
          "the checkpoint was written on {} workers and training continues on {}: parameters and "
          "optimizer state carry over; the adaptive scheme probes and traces afresh",
          written_on, comm.size());
    }
  });
}

}  // namespace adaqp::cli
