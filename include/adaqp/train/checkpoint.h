// Training checkpoints: everything a run needs to continue so that the resumed run reproduces the
// uninterrupted one (same seed): exactly on the same number of workers W, and on any other number
// W' as closely as training on W' reproduces training on W (float summation order only; docs/
// design.md, section 8).
//
// One file per checkpoint, written by rank 0 alone: after the gradient all-reduce every rank holds
// identical parameters and Adam state, so one copy is enough, and it belongs to no partition: a job
// on W' workers (on another partition of the same dataset) loads it as it is. (Learned featureless
// rows, each rank's own, are the exception: below.) On resume every rank
// reads that file itself (the output directory is shared between ranks, as the partition directory
// already is).
// A checkpoint is <dir>/ckpt-<epoch, 6 digits>.bin, an array file (common/array_file.h): a CRC-32
// per array, written to a temporary file, fsync'ed and renamed, so a crash mid-write never leaves
// a half file and any corruption or truncation is detected on reading. Arrays:
//   header/format_version     int64 {kCheckpointFormatVersion}
//   header/dataset_fingerprint, header/model_type   uint8 (text)
//   header/model_shape        int64 {layers, hidden, in_dim, out_dim, layer_norm}
//   header/model_heads        int64 {GAT's attention heads; absent in older files, read as 0}
//   header/world              int64 {world size W, writer rank} (recorded, not compared)
//   header/seed               int64 (training.seed, bit-cast)
//   header/metric             uint8 (text): the metric of progress/best's scores (training.metric,
//                             auto resolved; absent in older files: accuracy or f1_micro, as auto)
//   progress/epoch            int64 {epochs completed}
//   progress/best             float64 {have_best, best validation score, test score at it}
//   progress/best_epoch       int64 {the epoch of that score; absent in older files, read as the
//                             file's epoch where it has a best score}
//   param/<name>, shape/<name>            float32 values, int64 sizes, per model parameter
//   adam/<name>/step, adam/<name>/exp_avg, adam/<name>/exp_avg_sq (and adam/<name>/max_exp_avg_sq
//   with amsgrad): torch::optim::Adam's state of the parameter, absent before its first step.
//   header/embedding          int64 {1 with learned featureless rows, else 0; absent in older
//   files}
//   best/<name>               float32: with training.restore_best, every parameter's values at the
//                             best validation epoch (ModelSnapshot), once there is one
// Learned featureless rows (model.featureless: embedding) are no parameter every rank shares: each
// rank owns the rows of its nodes. Each rank writes its rows beside the checkpoint, to
// embedding_path(checkpoint, rank), before rank 0 writes the checkpoint itself (every rank waits
// for all of them first): embedding/gids (the rows' node ids), embedding/shape, embedding/rows,
// and once stepped embedding/adam_step, embedding/exp_avg, embedding/exp_avg_sq (and
// embedding/max_exp_avg_sq with amsgrad), and with training.restore_best embedding/best_rows (the
// rows at the best validation epoch). A checkpoint with embedding rows reads back intact only with
// all its header/world files, and a job on any W' takes each of its nodes' rows from them. Random
// numbers carry no state to save: dropout masks (and quantization noise) are counter-based Philox
// draws keyed by (seed, epoch, layer, global node id, ...), so seed and epoch resume them. Not
// stored: the bit-width assignment and the fitted link model of adaptive quantization, which belong
// to one partition and one set of links; a resumed job probes its links and traces its messages
// afresh, as a new job does (the first epochs at 8 bits, then solved widths).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/common/array_file.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Adam;
}

namespace adaqp {

constexpr int kCheckpointFormatVersion = 1;

// Number of newest checkpoints kept in a directory (older ones are deleted after each write): one
// spare survives if the newest is ever damaged.
constexpr int kCheckpointsKept = 2;

// What a checkpoint must agree with to be resumed by a job.
struct CheckpointHeader {
  int format_version = kCheckpointFormatVersion;
  std::string dataset_fingerprint;  // the partition's dataset fingerprint
  std::string model_type;           // gcn | sage | gat
  int64_t layers = 0, hidden = 0, in_dim = 0, out_dim = 0;
  bool layer_norm = false;
  // model.heads; 0 read from a file written before heads were recorded (then not compared: the
  // parameters' shapes still are).
  int64_t heads = 1;
  // model.num_bases; -1 read from a file written before it was recorded (then not compared: the
  // parameters' names still are).
  int64_t num_bases = 0;
  bool embedding = false;  // learned featureless rows (model.featureless: embedding, in use)
  int world_size = 0;      // workers of the job that wrote the file (not compared)
  int rank = 0;            // the rank that wrote the file (not compared)
  uint64_t seed = 0;
  // training.metric as the trainer resolved it; empty from a file written before it was recorded.
  std::string metric;
};

// Where the epoch loop stands: epochs completed and the best validation score so far.
struct CheckpointProgress {
  int epoch = 0;
  bool have_best = false;
  double best_val = 0;
  double test_at_best_val = 0;
  int best_epoch = 0;  // the first epoch that reached best_val (0 without one)
  // False for a file written before the best epoch was recorded: best_epoch is then its epoch.
  bool best_epoch_recorded = true;
};

// The parameters (in named_parameters() order) and this rank's learned featureless rows (undefined
// without) copied at one epoch, on their device: training.restore_best's copy of the best
// validation epoch, kept beside the live ones and put back after the last epoch.
struct ModelSnapshot {
  int epoch = 0;  // 0: nothing kept
  std::vector<at::Tensor> params;
  at::Tensor embedding;
};

// "<dir>/ckpt-000012.bin" for epoch 12.
std::string checkpoint_path(const std::string& dir, int epoch);

// One checkpoint's arrays, with `best`'s parameters where given: a copy of the model's and the
// optimizer's state as they are now, to be written later (ArrayFileWriter::write, atomically).
ArrayFileWriter checkpoint_arrays(const CheckpointHeader& header,
                                  const CheckpointProgress& progress,
                                  const torch::nn::Module& model,
                                  const torch::optim::Adam& optimizer,
                                  const ModelSnapshot* best = nullptr);

// Writes one checkpoint (checkpoint_arrays) atomically. InputError naming the file if it cannot be
// written.
void save_checkpoint(const std::string& path, const CheckpointHeader& header,
                     const CheckpointProgress& progress, const torch::nn::Module& model,
                     const torch::optim::Adam& optimizer, const ModelSnapshot* best = nullptr);

// The file of rank `rank`'s embedding rows of checkpoint `checkpoint`:
// "<dir>/ckpt-000012.emb-0003.bin".
std::string embedding_path(const std::string& checkpoint, int rank);

// The checkpoint a file of learned rows belongs to: its dataset, the run's seed (its header's) and
// its epoch. Each file records it; loading compares it with the checkpoint's.
struct EmbeddingOrigin {
  std::string dataset_fingerprint;
  uint64_t seed = 0;
  int epoch = 0;
};

// Writes this rank's embedding rows `rows` (rows x columns; their node ids `gids`), their Adam
// state in `optimizer`, where given the same rows at the best epoch `best_rows`, and `origin` to
// `path` atomically. InputError naming the file if it cannot be written.
void save_embedding_rows(const std::string& path, const EmbeddingOrigin& origin,
                         const std::vector<int64_t>& gids, const at::Tensor& rows,
                         const torch::optim::Adam& optimizer,
                         const at::Tensor* best_rows = nullptr);

// Restores into `rows` (this rank's, of node ids `gids`) and into its Adam state in `optimizer`
// (whose parameters' state the checkpoint has restored) the rows of those ids from the `ranks`
// embedding files of `checkpoint`, whose origin is `origin`. InputError naming the file for a node
// whose row is in none of them, a node id outside [0, num_nodes) or one with two rows, rows of
// another width, a file of another origin (another run, dataset or epoch: files written before the
// origin was recorded have none), Adam steps that disagree with each other or with the
// parameters', values that are not finite or negative second moments; on any error nothing has
// been changed. With `best_rows`, also the rows at the best epoch into a new tensor there where the
// files have them (else it stays undefined).
void load_embedding_rows(const std::string& checkpoint, int ranks, const EmbeddingOrigin& origin,
                         int64_t num_nodes, const std::vector<int64_t>& gids,
                         const at::Tensor& rows, torch::optim::Adam& optimizer,
                         at::Tensor* best_rows = nullptr);

// Reads the header and progress of `path`, verifying every array's checksum on the way (and its
// embedding files', where it has them).
// InputError naming the file and the array if it is corrupt, truncated, not a checkpoint, or of
// another format version.
struct CheckpointInfo {
  CheckpointHeader header;
  CheckpointProgress progress;
  bool best_params = false;  // it holds the parameters of its best epoch (training.restore_best)
};
CheckpointInfo read_checkpoint_info(const std::string& path);

// InputError naming the file, the field and both values where `found` (a checkpoint's header)
// differs from `expected` in what the job's configuration alone fixes: model type and shape, heads,
// bases, seed. (load_checkpoint compares the whole header; this much is known before the dataset is
// read.)
void check_job_header(const std::string& path, const CheckpointHeader& found,
                      const CheckpointHeader& expected);
// InputError unless a checkpoint's best score (metric `found`, empty in older files: accuracy or
// f1_micro, as auto scores) is of metric `expected` (training.metric, auto resolved).
void check_checkpoint_metric(const std::string& path, const std::string& found,
                             const std::string& expected);

// Checks `path` against `expected` (every header field but the world size and the writer rank; an
// older file without a metric scored as auto does, and refuses rocauc;
// InputError "<file>: <field>: checkpoint has X, this job has Y"), then restores the parameters
// and the Adam state into `model` and `optimizer`, whose parameters must be the model's. A missing
// parameter or one of another shape, a value that is not finite and a negative Adam second moment
// are InputErrors naming the array, index and value; on any error nothing has been
// changed. With `best`, also the best epoch's parameters into best->params where the file has them
// (else best->params stays empty).
CheckpointProgress load_checkpoint(const std::string& path, const CheckpointHeader& expected,
                                   torch::nn::Module& model, torch::optim::Adam& optimizer,
                                   ModelSnapshot* best = nullptr);

// Epochs of the checkpoint files in `dir` (by file name only), newest first; none if `dir` does not
// exist. InputError for an entry of a checkpoint's name that is not a regular file (a directory).
std::vector<int> list_checkpoints(const std::string& dir);

// Path of the newest checkpoint in `dir` that reads back intact and records the epoch of its name;
// corrupt, truncated or unreadable ones, and ones recording another epoch, are skipped with a
// warning naming the problem. "" if there is none.
std::string latest_checkpoint(const std::string& dir);

// Deletes all but the newest `keep` checkpoints of `dir` up to epoch `written` (the one just
// written), with their embedding files, and the embedding files older than it that belong to none
// (a run that died between its ranks' writes and rank 0's); warning on failure. Checkpoints named
// for a later epoch, and those of `skipped` (files a resume passed over as unreadable, named for
// epochs after the one it continued from, that this run has not written anew), are left alone
// and not counted: counted, they would leave fewer than `keep` intact checkpoints of this run.
void prune_checkpoints(const std::string& dir, int keep, int written,
                       const std::vector<int>& skipped = {});

}  // namespace adaqp
