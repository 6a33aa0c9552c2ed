// The fewest rows that carry every cut edge of a (sender, receiver) pair (docs/design.md, section
// 4, "the cover layout"). A cut edge j -> i (j owned by the sender, i by the receiver) can travel
// as the source row h_j or inside a partial sum for i that the sender computes. The smallest set of
// such rows is a minimum vertex cover of the pair's bipartite boundary graph (sources on the left,
// destinations on the right), which König's theorem gives from a maximum matching (Hopcroft-Karp).
// This header computes it and counts it against the rows layout's rows (adaqp info --covers); the
// exchange's cover layout is built from it (exchange/cover_layout.h).
#pragma once

#include <cstdint>
#include <vector>

#include "adaqp/partition/part.h"

namespace adaqp {

// A bipartite graph in CSR form: the right vertices adjacent to left vertex u are
// right[offsets[u] .. offsets[u + 1]), each in [0, num_right).
struct Bipartite {
  int64_t num_right = 0;
  std::vector<int64_t> offsets = {0};  // num_left + 1 entries
  std::vector<int64_t> right;

  int64_t num_left() const { return static_cast<int64_t>(offsets.size()) - 1; }
};

// A maximum matching (Hopcroft-Karp, O(E sqrt(V))): match_left[u] is u's right partner or -1, and
// match_right likewise.
struct Matching {
  std::vector<int64_t> match_left, match_right;
  int64_t size = 0;
};
Matching maximum_matching(const Bipartite& g);

// A minimum vertex cover (König's construction from a maximum matching): every edge has an end in
// it, and its size equals the matching's.
struct VertexCover {
  std::vector<uint8_t> left, right;  // 1: in the cover
  int64_t num_left = 0, num_right = 0;
  int64_t size() const { return num_left + num_right; }
};
VertexCover minimum_vertex_cover(const Bipartite& g);

// The boundary graph of sender -> part.rank in `part`: left vertices are the halo nodes the sender
// owns (in halo order), right vertices the owned rows of `part` with an in-edge from them.
// `destination_rows` (if given) receives the owned local index of each right vertex.
Bipartite boundary_graph(const Part& part, int sender, std::vector<int64_t>* destination_rows);
// The same for a heterogeneous part whose layers aggregate every relation on its own (R-GCN): a
// partial sum then serves one (row, relation), so the right vertices are the pairs (owned row,
// relation) with an in-edge of that relation from the sender's halo block, in (row, relation)
// order; a source row still serves all its relations.
Bipartite relation_boundary_graph(const Part& part, int sender);
// The same for the relation-first layout (exchange/relation_first_layout.h), whose rows are
// already transformed by W_r: a sender's row h_j W_r serves one (source, relation), a partial sum
// serves one destination and every relation. Left vertices: the pairs (position of the source in
// the sender's halo block, relation) with a cut edge, ascending (`sources`, if given, receives
// them); right vertices: the owned rows with an in-edge from the sender, in row order
// (`destination_rows`). A duplicate edge is one bipartite edge.
struct SourceRelation {
  int64_t source = 0;  // position in the sender's halo block
  int32_t relation = 0;
  bool operator<(const SourceRelation& o) const {
    return source != o.source ? source < o.source : relation < o.relation;
  }
  bool operator==(const SourceRelation& o) const {
    return source == o.source && relation == o.relation;
  }
};
Bipartite relation_first_graph(const Part& part, int sender, std::vector<SourceRelation>* sources,
                               std::vector<int64_t>* destination_rows);
// The rows the relation-first layout's exchanges bring `part` from all its senders: the sizes of
// the minimum covers of their relation_first_graph (no communication).
int64_t relation_first_rows(const Part& part);

// One ordered pair's rows: today's (one source row per halo node) and a minimum cover's, split into
// source rows and partial-sum rows.
struct PairCover {
  int sender = 0, receiver = 0;
  int64_t cut_edges = 0;
  int64_t source_rows = 0;
  int64_t cover_sources = 0, cover_partials = 0;
  // Heterogeneous parts: a minimum cover of relation_boundary_graph (0 otherwise).
  int64_t relation_cover_sources = 0, relation_cover_partials = 0;
  // Heterogeneous parts, the relation-first layout's rows: one per destination, against a minimum
  // cover of relation_first_graph (transformed source rows and destinations' partial sums).
  int64_t destinations = 0;
  int64_t first_cover_sources = 0, first_cover_partials = 0;
  int64_t cover_rows() const { return cover_sources + cover_partials; }
  int64_t relation_cover_rows() const { return relation_cover_sources + relation_cover_partials; }
  int64_t first_cover_rows() const { return first_cover_sources + first_cover_partials; }
};
// The pairs into `part` (every sender with at least one cut edge), in sender order.
std::vector<PairCover> boundary_covers(const Part& part);

}  // namespace adaqp
