// The epoch loop of `adaqp train` and its outputs. Rank 0 logs every rank's part at start-up
// (central and marginal nodes, share of local in-edges, bytes of one full-precision exchange per
// layer), a progress line every RunOptions::progress_every epochs, and writes, under the output
// directory:
//   metrics.jsonl  one JSON record per epoch and rank (metrics_record.h), flushed every epoch,
//                  preceded for the adaptive scheme by the link model {"event":"link_model", ...}
//                  (link_probe.h) and followed by one summary record {"event":"summary", ...} with
//                  the fields of RunSummary, written last (after params.bin and
//                  RunOptions::write_outputs); docs/metrics.md is the schema;
//   params.bin     the final parameters (with restore_best, the best validation epoch's): float32,
//                  little-endian, every parameter's values concatenated in registration order.
// and, with checkpoint_every > 0, the checkpoints (train/checkpoint.h) in checkpoint_dir.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/quant/widths.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/memory_meter.h"
#include "adaqp/train/trainer.h"

namespace adaqp {

struct RunOptions {
  int epochs = 200;
  int eval_every = 1;  // evaluate every this many epochs, and after the last one
  // Early stopping: end after an evaluated epoch at least this many epochs after the best
  // validation score (stops_early_after); 0 = never.
  int patience = 0;
  // Keep a copy of the parameters at the best validation epoch (in checkpoints too) and put it back
  // after the last epoch, before params.bin is written.
  bool restore_best = false;
  int progress_every = 1;  // log a progress line every this many epochs, the first and the last
  std::string output_dir;
  // Rank 0 writes a checkpoint (train/checkpoint.h) into checkpoint_dir every checkpoint_every
  // epochs and after the last one, then keeps the newest kCheckpointsKept; 0 = no checkpoints.
  int checkpoint_every = 0;
  std::string checkpoint_dir;
  CheckpointHeader checkpoint_header;
  // Where to continue from (a loaded checkpoint's progress); epoch 0 = a fresh run. A resumed run
  // keeps the records of metrics.jsonl up to that epoch and appends to them.
  CheckpointProgress start;
  ModelSnapshot start_best;  // restore_best: the best epoch's parameters the checkpoint kept
  // This rank's peak memory in the phases before training (load, partition, start-up); the
  // training phase is measured here.
  PhasePeaks memory;
  bool memory_resets = true;  // MemoryMeter::resets() of those phases
  PhaseSeconds seconds{};     // and their wall times (the training phase's is measured here)
  // Collective, when set: the run's other outputs (output.predictions), written on every rank
  // after params.bin and before the summary record, so that a summary stands for a run whose
  // outputs were all written.
  std::function<void()> write_outputs;
};

struct RunSummary {
  double best_val_acc = 0;
  double test_acc_at_best_val = 0;
  double final_test_acc = 0;
  double mean_epoch_time_s = 0;  // mean over epochs of the slowest rank's epoch time
  double epochs_per_s = 0;
  std::string metric;   // accuracy | f1_micro | rocauc
  int first_epoch = 0;  // the first epoch this run ran (after a checkpoint, when resumed):
                        // the means and the memory and time by phase cover first_epoch..epochs
  int epochs = 0;       // the last epoch run
  int best_epoch = 0;   // the first epoch that reached best_val_acc
  bool stopped_early = false;  // by RunOptions::patience, before RunOptions::epochs
  int params_epoch = 0;        // the epoch whose parameters params.bin holds
  int world_size = 0;
  std::string device;  // "cpu" or "cuda:<index>" (rank 0's)
  // The widest vector path rank 0's CPU kernels use (common/cpu_features.h): scalar, avx2, avx512.
  std::string cpu_isa;
  // Halo exchanges, all ranks together, mean over the epochs run: bytes sent, and what the same
  // exchanges would send at float32.
  double bytes_per_epoch = 0;
  double full_precision_bytes_per_epoch = 0;
  // The exchange layout (communication.exchange) and the rows one forward exchange sends, all
  // ranks together (a backward exchange sends as many).
  std::string exchange;
  int64_t rows_per_exchange = 0;
  // The ranks whose layer 0 reads its input (A X, or X) kept sparse (training.sparse_features;
  // model/sparse_features.h).
  int sparse_features_ranks = 0;
  // Adaptive scheme: the share of messages sent at 2, 4 and 8 bits and at full precision (all
  // ranks, all epochs run).
  bool adaptive = false;
  std::array<double, quant::kNumMessageWidths> bit_shares{};
  // Where the slowest rank's epoch went, mean over the epochs run (seconds): computation, waiting
  // for exchanges, loss and gradient all-reduce, bit-width assignment; and quantization on any
  // thread or stream (part of the others).
  double compute_s = 0, exposed_comm_s = 0, reduce_s = 0, assign_s = 0, quant_s = 0;
  // Every rank's peak memory by phase (index: rank); whether each phase's resident peak is its own
  // (false: counted from the start of the process, where the kernel cannot reset it).
  std::vector<PhasePeaks> memory;
  bool memory_resets = true;
  // Every rank's wall time by phase (index: rank).
  std::vector<PhaseSeconds> seconds;
};

// A few lines for the end of a run: accuracy, speed, bytes against full precision, bit-width mix
// and where the epoch time went.
std::string describe(const RunSummary& s);

// Whether a run with options `opt` ends early after epoch p.epoch, whose best validation score so
// far `p` records: with patience, p.epoch is evaluated (a multiple of eval_every, before the last),
// and p.best_epoch is at least patience epochs older.
bool stops_early_after(const CheckpointProgress& p, const RunOptions& opt);
// Whether nothing is left to train from opt.start: its epoch is the last, or the run stopped early
// there.
bool training_finished(const RunOptions& opt);

// Trains epochs opt.start.epoch + 1 .. opt.epochs (the number keys the dropout masks), or until it
// stops early (stops_early_after). Collective.
// After every step, a non-finite loss, gradient or parameter stops the run with a NumericalError
// (the same on every rank) naming the epoch, the parameter and the last good checkpoint.
RunSummary train_epochs(Trainer& trainer, Communicator& comm, const RunOptions& opt);

// InputError naming `path` (a run's metrics.jsonl) when it exists and is not a regular file: a
// directory, or a FIFO, whose open would wait for a peer for ever.
void require_metrics_file(const std::string& path);

// The lines of metrics.jsonl (at `path`) a run resumed after epoch `last` keeps: its epoch records
// up to `last`, each link model record that one of them follows (the model of the process that
// ran them), no summary. A last line without its newline is a record a failed write cut short (a
// full disk): it is dropped, and *cut_line (when given) is its number (else 0). InputError naming
// the file and line of another record that is not JSON, or the file when it is not a regular file.
std::string metrics_kept_on_resume(const std::string& path, int last, int* cut_line = nullptr);

}  // namespace adaqp
