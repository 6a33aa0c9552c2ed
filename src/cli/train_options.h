// The options of the training modules, each built once from the job's configuration: the trainer's
// (train/trainer.h) and the epoch loop's (train/epoch_loop.h). The one place where `adaqp train`
// maps job keys onto what the modules own.
#pragma once

#include <string>

#include "adaqp/comm/communicator.h"
#include "adaqp/common/device.h"
#include "adaqp/config/job_config.h"
#include "adaqp/train/epoch_loop.h"
#include "adaqp/train/trainer.h"

namespace adaqp::cli {

// The trainer of the job on `device`.
TrainerOptions trainer_options(const JobConfig& cfg, const Device& device);

// The fields of the job's checkpoint header that its configuration alone fixes (model and seed),
// known before the dataset is read.
CheckpointHeader job_checkpoint_header(const JobConfig& cfg);

// The epoch loop of the job for `trainer` (its checkpoint header names the dataset by
// `fingerprint`); the phases' memory and times before training are the caller's to fill in.
RunOptions run_options(const Communicator& comm, const JobConfig& cfg, const Trainer& trainer,
                       const std::string& fingerprint);

}  // namespace adaqp::cli
