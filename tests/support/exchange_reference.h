// The rows a worker sends and receives in one halo exchange of each layout, counted from the whole
// graph and its owner map alone: none of the Part, Boundary or layout code under test is used. For
// every ordered pair of workers (p, q) the cut edges j -> i (j owned by p, i by q) give
//   rows:           one row per distinct source j;
//   cover:          a minimum vertex cover of the bipartite graph of those sources and
//                   destinations, whose size is a maximum matching's (König's theorem), found here
//                   by Kuhn's augmenting paths rather than the library's Hopcroft-Karp;
//   relation_first: the same over (source, relation) pairs and destinations.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "adaqp/common/choices.h"
#include "adaqp/graph/graph.h"

namespace adaqp::test {

struct ExchangedRows {
  int64_t sends = 0;  // rows this worker sends, summed over its peers
  int64_t recvs = 0;  // rows it receives
  int64_t both() const { return sends + recvs; }
};

// The size of a maximum matching of a bipartite graph given as (left key, right key) edges.
inline int64_t maximum_matching_size(const std::set<std::pair<int64_t, int64_t>>& edges) {
  std::map<int64_t, std::vector<int64_t>> adjacent;
  for (const auto& [left, right] : edges) adjacent[left].push_back(right);
  std::map<int64_t, int64_t> partner;  // right key -> its matched left key
  int64_t size = 0;
  for (const auto& start : adjacent) {
    std::set<int64_t> visited;
    const std::function<bool(int64_t)> augment = [&](int64_t left) {
      for (const int64_t right : adjacent[left]) {
        if (!visited.insert(right).second) continue;
        const auto matched = partner.find(right);
        if (matched == partner.end() || augment(matched->second)) {
          partner[right] = left;
          return true;
        }
      }
      return false;
    };
    if (augment(start.first)) ++size;
  }
  return size;
}

// The rows of worker `rank` under `layout` (kRows, kCover or kRelationFirst), as stated above.
inline ExchangedRows exchanged_rows(const Graph& g, const std::vector<int32_t>& owner, int rank,
                                    ExchangeLayout layout) {
  if (layout == ExchangeLayout::kAuto)
    throw std::invalid_argument("exchanged_rows: a layout, not auto");
  // Per ordered pair (p, q): the bipartite edges (left key, destination) of its cut edges.
  std::map<std::pair<int32_t, int32_t>, std::set<std::pair<int64_t, int64_t>>> pairs;
  for (int64_t i = 0; i < g.num_nodes; ++i) {
    for (int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
      const int64_t j = g.indices[e];
      if (owner[j] == owner[i] || (owner[j] != rank && owner[i] != rank)) continue;
      const int64_t left = layout == ExchangeLayout::kRelationFirst
                               ? j * static_cast<int64_t>(g.relations.size()) + g.edge_relation[e]
                               : j;
      pairs[{owner[j], owner[i]}].insert({left, i});
    }
  }
  ExchangedRows rows;
  for (const auto& [pair, edges] : pairs) {
    int64_t n = 0;
    if (layout == ExchangeLayout::kRows) {
      std::set<int64_t> sources;
      for (const auto& edge : edges) sources.insert(edge.first);
      n = static_cast<int64_t>(sources.size());
    } else {
      n = maximum_matching_size(edges);
    }
    (pair.first == rank ? rows.sends : rows.recvs) += n;
  }
  return rows;
}

}  // namespace adaqp::test
