// The epoch loop of `adaqp train` and its outputs. Rank 0 logs every rank's part at start-up
// (central and marginal nodes, share of local in-edges, bytes of one full-precision exchange per
// layer), then one line per epoch (with the exposed communication time), and writes, under the
// output directory:
//   metrics.jsonl  one JSON record per epoch and rank (epoch, rank, loss, the times of EpochStats:
//                  epoch_time_s, compute_time_s, local_agg_time_s, halo_agg_time_s, dense_time_s,
//                  quant_time_s, comm_time_s, exposed_comm_time_s, reduce_time_s; bytes_sent and
//                  bytes_sent_by_layer {"fwd": [per layer], "bwd": [per layer]}; and train_acc,
//                  val_acc, test_acc when evaluated; the per-layer fields of layer_record.h),
//                  flushed every epoch, preceded for the adaptive scheme by the link model
//                  {"event":"link_model", ...} (link_probe.h) and followed by one summary record
//                  {"event":"summary", ...} with the fields of RunSummary;
//   params.bin     the final parameters: float32, little-endian, every parameter's values
//                  concatenated in registration order (for comparing runs).
// and, with checkpoint_every > 0, the checkpoints (train/checkpoint.h) in checkpoint_dir.
#pragma once

#include <string>

#include "adaqp/comm/communicator.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/trainer.h"

namespace adaqp {

struct RunOptions {
  int epochs = 200;
  int eval_every = 1;  // evaluate every this many epochs, and after the last one
  std::string output_dir;
  // Rank 0 writes a checkpoint (train/checkpoint.h) into checkpoint_dir every checkpoint_every
  // epochs and after the last one, then keeps the newest kCheckpointsKept; 0 = no checkpoints.
  int checkpoint_every = 0;
  std::string checkpoint_dir;
  CheckpointHeader checkpoint_header;
  // Where to continue from (a loaded checkpoint's progress); epoch 0 = a fresh run. A resumed run
  // keeps the records of metrics.jsonl up to that epoch and appends to them.
  CheckpointProgress start;
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

// Trains epochs opt.start.epoch + 1 .. opt.epochs (the number keys the dropout masks). Collective.
// After every step, a non-finite loss, gradient or parameter stops the run with a NumericalError
// (the same on every rank) naming the epoch, the parameter and the last good checkpoint.
RunSummary run_training(Trainer& trainer, Communicator& comm, const RunOptions& opt);

}  // namespace adaqp
