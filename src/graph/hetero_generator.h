// The heterogeneous generator (hetero_generator.cpp) behind generate_graph (generator.h).
#pragma once

#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph.h"

namespace adaqp {

// ConfigError for the options the heterogeneous generator cannot honour.
void validate_hetero_options(const GeneratorOptions& opt);
// The ogbn-mag-shaped graph of opt (generator.h); the options already validated.
Graph generate_hetero_graph(const GeneratorOptions& opt);

}  // namespace adaqp
