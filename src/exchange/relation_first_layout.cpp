#include "adaqp/exchange/relation_first_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/partition/boundary_cover.h"
#include "peer_lists.h"

namespace adaqp {

namespace {

using exchange_detail::ListReader;

constexpr int kRelationFirstTag = 32755;
constexpr const char* kRelationFirstWhat = "relation-first layout";

// Row i's in-degree by each relation of its in-edges, from the part's own edges (it holds all of
// them): (relation, degree) ascending by relation.
std::vector<std::pair<int32_t, int64_t>> relation_degrees(const Part& part, int64_t i) {
  std::vector<int32_t> rel;
  for (int64_t k = part.local_indptr[i]; k < part.local_indptr[i + 1]; ++k)
    rel.push_back(part.local_relations[k]);
  for (int64_t k = part.halo_indptr[i]; k < part.halo_indptr[i + 1]; ++k)
    rel.push_back(part.halo_relations[k]);
  std::sort(rel.begin(), rel.end());
  std::vector<std::pair<int32_t, int64_t>> out;
  for (const int32_t r : rel) {
    if (out.empty() || out.back().first != r) out.emplace_back(r, 0);
    ++out.back().second;
  }
  return out;
}

}  // namespace

// The list a receiver sends each sender: the number of transformed source rows, then each one's
// source position in the sender's send list to the receiver (= in the receiver's halo block from
// the sender) and relation, ascending; then the number of destinations, then per destination its
// global id and number of pairs, and per pair its relation, the destination's in-degree by it, its
// number of edges and their sources' positions.
RelationFirstLayout relation_first_layout(const Part& part, Communicator& comm) {
  ADAQP_CHECK(comm.rank() == part.rank && comm.size() == part.num_parts,
              fmt::format("{} of part {} of {} on rank {} of {}", kRelationFirstWhat, part.rank,
                          part.num_parts, comm.rank(), comm.size()));
  // A part that owns no nodes has no type arrays, and still its relations.
  ADAQP_CHECK(part.num_relations >= 1,
              std::string(kRelationFirstWhat) + " of a part without relations");
  const int world = part.num_parts;
  const int32_t relations = part.num_relations;
  if (!relation_first_keys_fit(part)) {
    throw ConfigError(
        fmt::format("{}: {} nodes on {} workers with {} relations exceed the 2^40 "
                    "message keys; use communication.exchange=rows",
                    kRelationFirstWhat, part.global_num_nodes, world, relations));
  }
  RelationFirstLayout out;
  Boundary& b = out.boundary;
  b.rank = part.rank;
  b.num_parts = world;

  // Receiver: per sender, a minimum cover of its cut edges (transformed source rows, then the
  // destinations' partial sums in row order) and the received rows' entries into the owned rows.
  struct Entry {
    int64_t row, received;
    double value;
  };
  std::vector<Entry> entries;
  std::vector<std::vector<int64_t>> to_sender(world);
  b.recv_offsets.assign(static_cast<size_t>(world) + 1, 0);
  std::vector<std::pair<int32_t, int64_t>> edges;  // a destination's uncovered (relation, source)
  for (int s = 0; s < world; ++s) {
    b.recv_offsets[s] = static_cast<int64_t>(b.recv_keys.size());
    if (s == part.rank || part.halo_count_from(s) == 0) continue;
    const int64_t first = part.halo_offsets[s];
    std::vector<SourceRelation> sources;
    std::vector<int64_t> destinations;
    const Bipartite g = relation_first_graph(part, s, &sources, &destinations);
    const VertexCover cover = minimum_vertex_cover(g);
    std::vector<int64_t>& msg = to_sender[s];
    std::vector<int64_t> received_of(sources.size(), -1);  // a covered source's received row
    msg.push_back(cover.num_left);
    for (size_t k = 0; k < sources.size(); ++k) {
      if (!cover.left[k]) continue;
      received_of[k] = static_cast<int64_t>(b.recv_keys.size());
      b.recv_keys.push_back(
          relation_row_key(part, part.halo_gid[first + sources[k].source], sources[k].relation));
      msg.push_back(sources[k].source);
      msg.push_back(sources[k].relation);
    }
    msg.push_back(cover.num_right);
    for (size_t d = 0; d < destinations.size(); ++d) {
      const int64_t i = destinations[d];
      const std::vector<std::pair<int32_t, int64_t>> degrees = relation_degrees(part, i);
      const auto degree = [&](int32_t r) {
        const auto at =
            std::lower_bound(degrees.begin(), degrees.end(), std::make_pair(r, int64_t{0}));
        ADAQP_CHECK(at != degrees.end() && at->first == r,
                    "relation-first layout: a cut edge's relation without a degree");
        return at->second;
      };
      edges.clear();
      for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
        const SourceRelation sr{part.halo_indices[e] - first, part.halo_relations[e]};
        if (sr.source < 0 || sr.source >= part.halo_count_from(s)) continue;
        const int64_t k = std::lower_bound(sources.begin(), sources.end(), sr) - sources.begin();
        if (received_of[k] >= 0) {
          entries.push_back({i, received_of[k], 1.0 / static_cast<double>(degree(sr.relation))});
        } else {
          edges.emplace_back(sr.relation, sr.source);
        }
      }
      // A minimum cover holds a destination exactly when some of its edges have no transformed row.
      ADAQP_CHECK_EQ(static_cast<bool>(cover.right[d]), !edges.empty(),
                     "relation-first layout: a destination's partial sum in the cover");
      if (edges.empty()) continue;
      std::sort(edges.begin(), edges.end());
      entries.push_back({i, static_cast<int64_t>(b.recv_keys.size()), 1.0});
      b.recv_keys.push_back(partial_row_key(part, s, part.owned_gid[i]));
      msg.push_back(part.owned_gid[i]);
      const size_t pairs_at = msg.size();
      msg.push_back(0);
      for (size_t a = 0; a < edges.size();) {
        size_t z = a;
        while (z < edges.size() && edges[z].first == edges[a].first) ++z;
        ++msg[pairs_at];
        msg.push_back(edges[a].first);
        msg.push_back(degree(edges[a].first));
        msg.push_back(static_cast<int64_t>(z - a));
        for (; a < z; ++a) msg.push_back(edges[a].second);
      }
    }
  }
  b.recv_offsets[world] = static_cast<int64_t>(b.recv_keys.size());
  // The entries in CSR, a received row's duplicate edges into one row summed.
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
    return x.row != y.row ? x.row < y.row : x.received < y.received;
  });
  out.halo_indptr.assign(static_cast<size_t>(part.num_owned()) + 1, 0);
  for (size_t a = 0; a < entries.size();) {
    double value = 0;
    size_t z = a;
    for (; z < entries.size() && entries[z].row == entries[a].row &&
           entries[z].received == entries[a].received;
         ++z)
      value += entries[z].value;
    ++out.halo_indptr[entries[a].row + 1];
    out.halo_indices.push_back(static_cast<int32_t>(entries[a].received));
    out.halo_values.push_back(static_cast<float>(value));
    a = z;
  }
  for (int64_t i = 0; i < part.num_owned(); ++i) out.halo_indptr[i + 1] += out.halo_indptr[i];

  // Sender: the rows each receiver asked for, in its order.
  const std::vector<std::vector<int64_t>> from_receiver =
      exchange_detail::exchange_lists(comm, to_sender, kRelationFirstTag, kRelationFirstWhat);
  b.send_offsets.assign(static_cast<size_t>(world) + 1, 0);
  for (int r = 0; r < world; ++r) {
    b.send_offsets[r] = static_cast<int64_t>(b.send_keys.size());
    if (r == part.rank) continue;
    const int64_t count = part.send_count_to(r), first = part.send_offsets[r];
    if (from_receiver[r].empty() && count == 0) continue;
    ListReader in(from_receiver[r], r, kRelationFirstWhat);
    const int64_t sources = in.next("transformed source row count", 0, count * relations);
    SourceRelation last{-1, 0};
    for (int64_t k = 0; k < sources; ++k) {
      const SourceRelation sr{in.next("source position", 0, count - 1),
                              static_cast<int32_t>(in.next("source relation", 0, relations - 1))};
      ADAQP_CHECK(last < sr, fmt::format("{}: rank {} listed source ({}, {}) after ({}, {})",
                                         kRelationFirstWhat, r, sr.source, sr.relation, last.source,
                                         last.relation));
      last = sr;
      const int64_t j = part.send_idx[first + sr.source];
      out.pair_row.push_back(static_cast<int64_t>(b.send_keys.size()));
      b.send_keys.push_back(relation_row_key(part, part.owned_gid[j], sr.relation));
      out.pair_relation.push_back(sr.relation);
      out.pair_degree.push_back(1);
      out.pair_sources.push_back(static_cast<int32_t>(j));
      out.pair_indptr.push_back(static_cast<int64_t>(out.pair_sources.size()));
    }
    const int64_t destinations = in.next("destination count", 0, part.global_num_nodes);
    for (int64_t k = 0; k < destinations; ++k) {
      const int64_t row = static_cast<int64_t>(b.send_keys.size());
      const int64_t dst = in.next("destination", 0, part.global_num_nodes - 1);
      b.send_keys.push_back(partial_row_key(part, part.rank, dst));
      const int64_t pairs = in.next("pair count", 1, relations);
      int64_t last_relation = -1;
      for (int64_t p = 0; p < pairs; ++p) {
        const int64_t relation = in.next("relation", last_relation + 1, relations - 1);
        last_relation = relation;
        out.pair_row.push_back(row);
        out.pair_relation.push_back(static_cast<int32_t>(relation));
        out.pair_degree.push_back(
            exchange_detail::read_partial_sum(in, part, first, count, &out.pair_sources));
        out.pair_indptr.push_back(static_cast<int64_t>(out.pair_sources.size()));
      }
    }
    in.expect_end();
  }
  b.send_offsets[world] = static_cast<int64_t>(b.send_keys.size());
  return out;
}

}  // namespace adaqp
