// Hand-made typed multigraphs for the layout and partition tests: node types over id ranges,
// relations, and the edges src[k] -> dst[k] of relation rel[k]; one feature (zero), two classes
// (every label 0), the training nodes given.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/graph/graph.h"

namespace adaqp::test {

inline Graph typed_edges_graph(const std::string& name, std::vector<std::string> node_types,
                               std::vector<int64_t> type_offsets, std::vector<Relation> relations,
                               const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                               const std::vector<int32_t>& rel, std::vector<int64_t> train) {
  Graph g;
  g.name = name;
  g.num_nodes = type_offsets.back();
  g.node_types = std::move(node_types);
  g.type_offsets = std::move(type_offsets);
  g.relations = std::move(relations);
  const Graph built = Graph::from_edges(g.num_nodes, src, dst, rel);
  g.indptr = built.indptr;
  g.indices = built.indices;
  g.edge_relation = built.edge_relation;
  g.feat_dim = 1;
  g.features.assign(static_cast<size_t>(g.num_nodes), 0.0f);
  g.num_classes = 2;
  g.labels.assign(static_cast<size_t>(g.num_nodes), 0);
  g.train = std::move(train);
  g.validate(name);
  return g;
}

}  // namespace adaqp::test
