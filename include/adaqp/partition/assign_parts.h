// Assigning every node to one of W parts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/choices.h"
#include "adaqp/graph/graph.h"
#include "adaqp/partition/dataset_files.h"

namespace adaqp {

struct PartitionOptions {
  PartitionMethod method = PartitionMethod::kMetis;
  int parts = 2;
  uint64_t seed = 0;
  bool balance_train = false;  // metis: extra constraint balancing training nodes
  bool balance_edges = false;  // metis: extra constraint balancing in-edges
  // metis, typed graphs: an extra constraint per node type, balancing each type's nodes (the
  // labelled type's among them, whose rows the loss and the evaluation read)
  bool balance_types = false;
  // metis and ptscotch: partition a sample of the graph in which each node keeps this many of its
  // neighbours (and those that keep it; partition/edge_sample.h); 0 = the whole graph.
  int64_t sample_degree = 0;
  // The dataset.* keys the graph was loaded with (config/job_config.h, dataset_identity): not read
  // by the partitioners, recorded in the partition directory and compared when it is reused.
  std::vector<std::pair<std::string, std::string>> dataset_keys;
  // The defaults of those keys: a directory written before a key existed was made with its default.
  std::vector<std::pair<std::string, std::string>> dataset_key_defaults;
  // The dataset directory's files now (partition/dataset_files.h; the CLI lists them): recorded in
  // a new partition directory, compared with what an existing one recorded. nullopt: no dataset
  // directory here (a generated graph, or a partition used where its dataset is not).
  std::optional<std::vector<DatasetFile>> dataset_files;
};

// owner[v] in [0, parts) for every node. metis: k-way, edge-cut objective, on the symmetrised graph
// without self-loops or its sample (balance_* add vertex-weight constraints); random: a seeded
// random permutation cut into equal chunks; contiguous: equal id ranges. Deterministic for the same
// graph and options. Throws ConfigError for parts outside [1, num_nodes] and for balance_types on
// a graph without node types, and InputError if a part would be empty (every part owns at least
// one node).
std::vector<int32_t> assign_parts(const Graph& g, const PartitionOptions& opt);

// Number of edges whose source and destination have different owners.
int64_t edge_cut(const Graph& g, const std::vector<int32_t>& owner);

// The seed METIS and PT-Scotch get for partition.seed, below `limit` (their seed type's bound):
// both seed a generator on which 0 and 1 give one sequence, so seeds 1, 2, ... map one to one to
// 2, 3, ... (until limit - 2 seeds; beyond, they wrap), and 0 stays 0 (the default partitions as
// before). Seed 1 partitioned as seed 0 until 2026-12-08.
uint64_t library_seed(uint64_t seed, uint64_t limit);

}  // namespace adaqp
