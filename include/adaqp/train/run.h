// The epoch loop of `adaqp train` and its outputs. Rank 0 prints one line per epoch and writes,
// under the output directory:
//   metrics.jsonl  one JSON record per epoch and rank (epoch, rank, loss, epoch_time_s,
//                  compute_time_s, comm_time_s, reduce_time_s, bytes_sent, and train_acc,
//                  val_acc, test_acc when evaluated), flushed every epoch, then one summary record
//                  {"event":"summary", ...} with the fields of RunSummary;
//   params.bin     the final parameters: float32, little-endian, every parameter's values
//                  concatenated in registration order (for comparing runs).
#pragma once

#include <string>

#include "adaqp/comm/communicator.h"
#include "adaqp/train/trainer.h"

namespace adaqp {

struct RunOptions {
  int epochs = 200;
  int eval_every = 1;  // evaluate every this many epochs, and after the last one
  std::string output_dir;
};

struct RunSummary {
  double best_val_acc = 0;
  double test_acc_at_best_val = 0;
  double final_test_acc = 0;
  double mean_epoch_time_s = 0;  // mean over epochs of the slowest rank's epoch time
  double epochs_per_s = 0;
  std::string metric;  // accuracy | f1_micro
  int epochs = 0;
  int world_size = 0;
};

// Trains opt.epochs epochs (numbered 1 .. epochs; the number keys the dropout masks). Collective.
RunSummary run_training(Trainer& trainer, Communicator& comm, const RunOptions& opt);

}  // namespace adaqp
