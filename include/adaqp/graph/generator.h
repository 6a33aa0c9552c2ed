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
  double avg_degree = 10.0;   // mean in-degree of the symmetric result (both directions count)
  double homophily = 0.8;     // share of edges whose two ends have the same class
  bool heavy_tailed = false;  // power-law expected degrees instead of uniform ones
  double power_law_exponent = 2.5;
  double feature_signal = 1.0;  // norm of each class's mean feature vector; noise is N(0, 1)
                                // per feature
  double train_fraction = 0.6;
  double valid_fraction = 0.2;  // the rest is test
  uint64_t seed = 0;
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
