// What a GNN model is (model.* of the job, and training.recompute): the options of GnnImpl
// (gnn.h), in a header of their own so that the trainer's options need no libtorch module headers.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/common/choices.h"

namespace adaqp {

// Learned input rows of the owned nodes whose type has no features (model.featureless:
// embedding): row i of the embedding is the input of owned row rows[i], global node gids[i]. Each
// entry starts uniform in +-sqrt(3) (unit variance), drawn from (seed, gid, column), so a node's
// row is the same whatever the partition.
struct InputEmbedding {
  bool enabled = false;  // on every rank alike, also one whose rows are empty
  std::vector<int64_t> rows, gids;
  uint64_t seed = 0;
};

struct GnnOptions {
  ModelType type = ModelType::kGcn;
  int layers = 2;
  int64_t in_dim = 0;
  int64_t hidden = 16;
  int64_t out_dim = 0;
  double dropout = 0.5;
  bool layer_norm = false;
  int heads = 1;  // gat: attention heads of a hidden layer (the last layer has one)
  double attention_dropout = 0.0;  // gat: dropout of the attention weights in training
  int relations = 0;               // rgcn: the graph's relations (the part's: Part::num_relations)
  int bases = 0;  // rgcn: shared bases of the relations' weights (0: a weight per relation)
  InputEmbedding embedding;  // rgcn
  // Layers that aggregate first keep their input and received halo rows instead of A h, and
  // recompute A h in backward (training.recompute: aggregations).
  bool recompute_aggregations = false;
};

}  // namespace adaqp
