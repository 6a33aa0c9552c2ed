// Human- and machine-readable summaries of a dataset and of a partition (adaqp info, partition).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "adaqp/graph/graph.h"
#include "adaqp/partition/boundary_cover.h"
#include "adaqp/partition/partition_dir.h"

namespace adaqp::cli {

using Json = nlohmann::ordered_json;

// Hidden sizes for which the partition report gives the bytes of one halo exchange.
inline constexpr int kReportHiddenSizes[] = {16, 64, 256};

std::string dataset_text(const Graph& g);
Json dataset_json(const Graph& g);

// Per-part table (owned, central, marginal, halo, in-edges, local in-edge %, sent rows, train)
// and the bytes one full-precision halo exchange moves: rows x hidden x 4 bytes.
std::string partition_text(const std::string& dir, const PartitionMeta& m);
Json partition_json(const std::string& dir, const PartitionMeta& m);

// Rows per ordered pair: today's source rows against a minimum boundary cover's
// (partition/boundary_cover.h), and the totals.
std::string covers_text(const std::vector<PairCover>& pairs);
Json covers_json(const std::vector<PairCover>& pairs);

}  // namespace adaqp::cli
