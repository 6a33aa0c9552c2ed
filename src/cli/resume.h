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

// --resume: rank 0 picks the newest intact checkpoint, every rank loads that one into its trainer;
// without it, nothing (cmd_train.cpp refused a checkpoint directory holding checkpoints already).
void prepare_checkpoints(Communicator& comm, const JobConfig& cfg, bool resume, Trainer& trainer,
                         RunOptions& ropt);

}  // namespace adaqp::cli
