// The one place that calls METIS: builds its undirected input, checks that the graph fits its
// index type and maps its return codes to exceptions.
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/graph/graph.h"

namespace adaqp {

// METIS_PartGraphKway (edge-cut objective, METIS_OPTION_SEED = seed) on g symmetrised, without
// self-loops or duplicate edges, or with sample_degree > 0 on its sample (partition/edge_sample.h,
// seeded by seed). vwgt holds `ncon` weights per vertex (vertex-major). parts == 1
// returns all zeros without calling METIS. Throws InputError when the graph or the weights do not
// fit METIS's idx_t, and Error naming the METIS return code when METIS fails.
std::vector<int32_t> metis_part_kway(const Graph& g, int ncon, const std::vector<int64_t>& vwgt,
                                     int parts, uint64_t seed, int64_t sample_degree);

}  // namespace adaqp
