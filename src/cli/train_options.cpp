#include "train_options.h"

#include <algorithm>

namespace adaqp::cli {

TrainerOptions trainer_options(const JobConfig& cfg, const Device& device) {
  const ModelConfig& m = cfg.model;
  const TrainingConfig& t = cfg.training;
  const CommunicationConfig& c = cfg.communication;
  TrainerOptions o;
  o.device = device;
  o.model.type = m.type;
  o.model.layers = m.layers;
  o.model.hidden = m.hidden;
  o.model.dropout = m.dropout;
  o.model.layer_norm = m.layer_norm;
  o.model.heads = m.heads;
  o.model.attention_dropout = m.attention_dropout;
  o.model.bases = m.num_bases;
  o.model.embedding.enabled = m.featureless == FeaturelessInput::kEmbedding;
  o.model.recompute_aggregations = t.recompute == Recompute::kAggregations;
  o.lr = t.lr;
  o.weight_decay = t.weight_decay;
  o.seed = t.seed;
  o.precision = t.precision;
  o.metric = t.metric;
  o.sparse_features = t.sparse_features;
  o.cache_features = c.feature_cache;
  o.exchange = c.exchange;
  o.mode = c.mode;
  o.scheme = c.scheme;
  o.bits = c.bits;
  o.adaptive.bit_set = c.bit_set;
  o.adaptive.lambda = c.lambda;
  o.adaptive.group_size = c.group_size;
  o.adaptive.period = c.assign_period;
  o.adaptive.objective = c.objective;
  o.adaptive.resolve_drift = c.resolve_drift;
  o.adaptive.background_solve = c.solve_schedule == SolveSchedule::kBackground ||
                                (c.solve_schedule == SolveSchedule::kAuto && device.is_cuda());
  o.adaptive.solver = c.solver;
  return o;
}

RunOptions run_options(const Communicator& comm, const JobConfig& cfg, const Trainer& trainer,
                       const std::string& fingerprint) {
  RunOptions ropt;
  ropt.epochs = cfg.training.epochs;
  ropt.eval_every = cfg.training.eval_every;
  ropt.patience = cfg.training.patience;
  ropt.restore_best = cfg.training.restore_best;
  ropt.progress_every = cfg.output.progress_every > 0 ? cfg.output.progress_every
                                                      : std::max(1, cfg.training.epochs / 20);
  ropt.output_dir = cfg.output.dir;
  ropt.checkpoint_every = cfg.training.checkpoint_every;
  ropt.checkpoint_dir = checkpoint_dir(cfg);
  CheckpointHeader& h = ropt.checkpoint_header;
  h = job_checkpoint_header(cfg);
  h.dataset_fingerprint = fingerprint;
  h.in_dim = trainer.part().feat_dim;
  h.out_dim = trainer.part().num_classes;
  h.metric = trainer.metric_name();
  h.world_size = comm.size();
  h.rank = comm.rank();
  return ropt;
}

CheckpointHeader job_checkpoint_header(const JobConfig& cfg) {
  CheckpointHeader h;
  h.model_type = to_string(cfg.model.type);
  h.layers = cfg.model.layers;
  h.hidden = cfg.model.hidden;
  h.layer_norm = cfg.model.layer_norm;
  h.heads = cfg.model.heads;
  h.num_bases = cfg.model.num_bases;
  h.seed = cfg.training.seed;
  return h;
}

}  // namespace adaqp::cli
