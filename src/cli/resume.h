// --resume and the checkpoint directory at the start of `adaqp train` (train/checkpoint.h).
#pragma once

#include "adaqp/comm/communicator.h"
#include "adaqp/config/job_config.h"
#include "adaqp/train/epoch_loop.h"
#include "adaqp/train/trainer.h"

namespace adaqp::cli {

// `adaqp train --resume`: kAlways needs a checkpoint to continue from; kAuto continues from one
// where the checkpoint directory holds any, else starts from epoch 1.
enum class ResumeMode { kNo, kAlways, kAuto };

// --resume, on rank 0 before the dataset is partitioned: the newest intact checkpoint of the job's
// checkpoint directory, once what the configuration alone decides has been checked (model and
// seed as the checkpoint's, epochs left to train or predictions asked for, metrics.jsonl that can
// be kept); ConfigError or InputError otherwise.
std::string choose_checkpoint(const JobConfig& cfg);

// --resume, on rank 0: a warning naming every key but training.epochs and output.* whose value
// differs from the resumed run's config.yaml (in output.dir, where it is), with both values: the
// later epochs train under this job's values (a changed training.lr is allowed; model, seed and
// dataset are checked), and this job's config.yaml replaces the run's.
void warn_keys_changed_since_run(const JobConfig& cfg);

// --resume: every rank loads `chosen` (choose_checkpoint, rank 0's) into its trainer; without it,
// nothing (cmd_train.cpp refused a checkpoint directory holding checkpoints already).
void prepare_checkpoints(Communicator& comm, const JobConfig& cfg, const std::string& chosen,
                         bool resume, Trainer& trainer, RunOptions& ropt);

}  // namespace adaqp::cli
