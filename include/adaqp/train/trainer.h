// Full-graph training on one worker of W (design notes, sections 4 and 8). Every rank runs the
// same steps: forward, loss, backward, all-reduce of the parameter gradients (sum), Adam step, so
// all ranks hold identical parameters after every step. The loss is the mean over ALL training
// nodes of all ranks: each rank sums its own nodes' losses and divides by the global count
// (softmax cross-entropy; for multi-label data, binary cross-entropy with logits averaged over
// nodes and classes). Evaluation uses full-precision messages and no dropout; its scores come from
// counts summed over ranks (accuracy, or F1-micro for multi-label data).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/config/job_config.h"
#include "adaqp/partition/part.h"

namespace adaqp {

struct TrainerOptions {
  ModelConfig model;
  TrainingConfig training;
  bool cache_features = true;  // communication.feature_cache
};

// One training step on this rank. The times are this rank's: compute = epoch - comm - reduce.
struct EpochStats {
  int epoch = 0;
  double loss = 0;          // global loss (identical on every rank)
  double epoch_time_s = 0;  // forward + backward + gradient all-reduce + optimizer step
  double compute_time_s = 0;
  double comm_time_s = 0;    // halo exchanges (pack, post, wait, unpack)
  double reduce_time_s = 0;  // loss and gradient all-reduce
  int64_t bytes_sent = 0;    // halo payload bytes this rank sent
};

// Scores over all ranks (identical on every rank): accuracy, or F1-micro for multi-label data.
struct EvalScores {
  double train = 0, valid = 0, test = 0;
};

// Sets the number of threads of libtorch's operators and of the project's kernels (OpenMP).
void set_compute_threads(int threads);

class Trainer {
 public:
  // Builds the graph context (collective when features are cached) and the model, whose
  // parameters are initialised from training.seed identically on every rank. ConfigError for an
  // unsupported model type or a dataset without training nodes.
  Trainer(Part part, Communicator& comm, const TrainerOptions& opt);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One optimisation step; `epoch` keys the dropout masks. Collective.
  EpochStats train_epoch(int epoch);
  // Full-precision forward without dropout; collective.
  EvalScores evaluate();

  // "accuracy" or "f1_micro".
  std::string metric_name() const;
  // Every parameter's values, concatenated in registration order.
  std::vector<float> parameter_values() const;
  int64_t num_parameters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace adaqp
