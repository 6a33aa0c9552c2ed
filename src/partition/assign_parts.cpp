#include "adaqp/partition/assign_parts.h"

#include <fmt/format.h>

#include <numeric>
#include <random>

#include "adaqp/common/error.h"
#include "adaqp/common/rng.h"
#include "metis_wrapper.h"

namespace adaqp {
namespace {

// Vertex weights: one per node, plus optional constraints on training nodes, in-edges and each
// node type's nodes. A constraint whose total is zero (no training nodes, a type without nodes)
// balances nothing and is left out.
std::vector<int64_t> metis_weights(const Graph& g, const PartitionOptions& opt, int& ncon) {
  constexpr int kNodes = 0, kTrain = 1, kEdges = 2, kFirstType = 3;  // kFirstType + t: type t
  std::vector<int> kinds = {kNodes};
  if (opt.balance_train && !g.train.empty()) kinds.push_back(kTrain);
  if (opt.balance_edges && g.num_edges() > 0) kinds.push_back(kEdges);
  if (opt.balance_types) {
    if (!g.heterogeneous())
      throw ConfigError("partition.balance_types = true: the dataset '" + g.name +
                        "' has no node types");
    for (size_t t = 0; t + 1 < g.type_offsets.size(); ++t) {
      if (g.type_offsets[t + 1] > g.type_offsets[t])
        kinds.push_back(kFirstType + static_cast<int>(t));
    }
  }
  ncon = static_cast<int>(kinds.size());
  std::vector<int64_t> is_train(g.num_nodes, 0);
  for (int64_t v : g.train) is_train[v] = 1;
  std::vector<int64_t> w(g.num_nodes * ncon);
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int c = 0; c < ncon; ++c) {
      const int kind = kinds[c];
      w[v * ncon + c] = kind == kNodes   ? 1
                        : kind == kTrain ? is_train[v]
                        : kind == kEdges ? g.in_degree(v)
                                         : int64_t{g.node_type(v) == kind - kFirstType};
    }
  }
  return w;
}

// A seeded random permutation dealt into equal contiguous chunks: balanced and uniform.
std::vector<int32_t> random_parts(const Graph& g, const PartitionOptions& opt) {
  std::vector<int64_t> order(g.num_nodes);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(mix_seed(opt.seed));
  shuffle_portable(order, rng);
  std::vector<int32_t> owner(g.num_nodes);
  for (int64_t i = 0; i < g.num_nodes; ++i)
    owner[order[i]] = static_cast<int32_t>(i * opt.parts / g.num_nodes);
  return owner;
}

std::vector<int32_t> contiguous_parts(const Graph& g, const PartitionOptions& opt) {
  std::vector<int32_t> owner(g.num_nodes);
  for (int64_t v = 0; v < g.num_nodes; ++v)
    owner[v] = static_cast<int32_t>(v * opt.parts / g.num_nodes);
  return owner;
}

}  // namespace

std::vector<int32_t> assign_parts(const Graph& g, const PartitionOptions& opt) {
  if (opt.parts < 1)
    throw ConfigError(fmt::format("partition.parts = {}: must be >= 1", opt.parts));
  if (opt.parts > g.num_nodes)
    throw ConfigError(fmt::format("partition.parts = {}: more parts than the {} nodes of '{}'",
                                  opt.parts, g.num_nodes, g.name));
  std::vector<int32_t> owner;
  switch (opt.method) {
    case PartitionMethod::kMetis: {
      int ncon = 1;
      const std::vector<int64_t> w = metis_weights(g, opt, ncon);
      owner = metis_part_kway(g, ncon, w, opt.parts, opt.seed, opt.sample_degree);
      break;
    }
    case PartitionMethod::kRandom:
      owner = random_parts(g, opt);
      break;
    case PartitionMethod::kContiguous:
      owner = contiguous_parts(g, opt);
      break;
    case PartitionMethod::kPtscotch:
      throw ConfigError(
          "partition.method ptscotch partitions with every rank of a job, each on a slice of the "
          "graph: run it under mpirun (adaqp train, or adaqp partition), not on a whole graph");
  }
  std::vector<int64_t> sizes(opt.parts, 0);
  for (int32_t r : owner) ++sizes[r];
  for (int r = 0; r < opt.parts; ++r)
    if (sizes[r] == 0)
      throw InputError(g.name, "partition",
                       fmt::format("method {} left part {} of {} empty; use fewer parts",
                                   to_string(opt.method), r, opt.parts));
  return owner;
}

int64_t edge_cut(const Graph& g, const std::vector<int32_t>& owner) {
  ADAQP_CHECK(static_cast<int64_t>(owner.size()) == g.num_nodes, "owner has one entry per node");
  int64_t cut = 0;
  for (int64_t v = 0; v < g.num_nodes; ++v)
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) cut += owner[g.indices[e]] != owner[v];
  return cut;
}

uint64_t library_seed(uint64_t seed, uint64_t limit) {
  ADAQP_CHECK(limit > 2, "a seed bound above 2");
  return seed == 0 ? 0 : 2 + (seed - 1) % (limit - 2);
}

}  // namespace adaqp
