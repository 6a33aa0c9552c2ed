// A synthetic community graph: the embedded default dataset. A stochastic block model (one block
// per class) with an optional heavy-tailed (power-law) degree distribution, and features drawn as
// class-dependent Gaussian noise, so that a GNN learns it to a meaningful but not trivial accuracy.
#pragma once

#include <cstdint>

#include "adaqp/graph/graph.h"

namespace adaqp {

struct GeneratorOptions {
  int64_t num_nodes = 10000;
  int64_t num_classes = 8;
  int64_t feat_dim = 64;
  double avg_degree = 10.0;  // mean in-degree of the symmetric result (both directions count)
  // Homogeneous: share of edges whose two ends have the same class (with heavy_tailed, the
  // duplicates merged among hubs lower it a little: 0.79 for 0.8). Heterogeneous: see below.
  double homophily = 0.8;
  bool heavy_tailed = false;  // power-law expected degrees instead of uniform ones
  double power_law_exponent = 2.5;
  double feature_signal = 1.0;  // norm of each class's mean feature vector; noise is N(0, 1)
                                // per feature
  double train_fraction = 0.6;
  double valid_fraction = 0.2;  // the rest is test
  uint64_t seed = 0;
  // An ogbn-mag-shaped heterogeneous graph instead (graph.h's types): num_nodes split as ogbn-mag's
  // (authors 58%, fields of study 3.1%, institutions 0.45%, papers 38.4%; at least num_classes
  // of each), relations (author, affiliated_with, institution) one per author, (author, writes,
  // paper) three per paper, (paper, cites, paper) round(avg_degree / 2) per paper, (paper,
  // has_topic, field_of_study) two per paper, repeated pairs dropped. Every node has a balanced
  // class and each edge's partner is drawn from the node's class with probability homophily, else
  // from the whole type (so that homophily + (1 - homophily) / num_classes of the edges join one
  // class, and homophily 0 is no planted structure); features (as
  // below), labels and the split (fractions of the papers) on papers only. heavy_tailed does not
  // apply.
  bool heterogeneous = false;
};

// Throws ConfigError naming the field (dataset.synthetic.<field>), its value and the allowed range.
void validate_generator_options(const GeneratorOptions& opt);

// Validates the options and generates the graph: symmetric, no self-loops, no duplicate edges,
// exactly round(num_nodes * avg_degree / 2) undirected edges, classes of equal size (+-1), a random
// train/valid/test split by the fractions; identical output for identical options on every machine.
// Structure, features and split come from separate random streams of the seed, so changing
// feat_dim or the fractions leaves the edges unchanged.
Graph generate_graph(const GeneratorOptions& opt);

}  // namespace adaqp
