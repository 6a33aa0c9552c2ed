// The node data both generators (generator.cpp, hetero_generator.cpp) draw alike: class features
// and the train/valid/test split.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph.h"

namespace adaqp {

// Features of the nodes `nodes` (g.features already sized, g.labels set): per class a random
// direction of norm feature_signal, plus unit Gaussian noise per feature, drawn from `rng`.
void draw_class_features(Graph& g, const GeneratorOptions& o, const std::vector<int64_t>& nodes,
                         std::mt19937_64& rng);
// Splits `nodes` at random (`rng`) into g.train, g.valid and g.test by the options' fractions.
void draw_node_split(Graph& g, const GeneratorOptions& o, std::vector<int64_t> nodes,
                     std::mt19937_64& rng);

}  // namespace adaqp
