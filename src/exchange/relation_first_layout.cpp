#include "adaqp/exchange/relation_first_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "peer_lists.h"

namespace adaqp {

namespace {

using exchange_detail::ListReader;

constexpr int kRelationFirstTag = 32755;
constexpr const char* kWhat = "relation-first layout";

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

// The list a receiver sends each sender: the number of destinations, then per destination its
// global id and number of pairs, and per pair its relation, the destination's in-degree by it,
// its number of edges and their sources' positions in the sender's send list to the receiver (=
// in the receiver's halo block from the sender).
RelationFirstLayout relation_first_layout(const Part& part, Communicator& comm) {
  ADAQP_CHECK(comm.rank() == part.rank && comm.size() == part.num_parts,
              fmt::format("{} of part {} of {} on rank {} of {}", kWhat, part.rank, part.num_parts,
                          comm.rank(), comm.size()));
  // A part that owns no nodes has no type arrays, and still its relations.
  ADAQP_CHECK(part.num_relations >= 1, std::string(kWhat) + " of a part without relations");
  const int world = part.num_parts;
  // Keys reach global_num_nodes * (1 + world); the noise counters take keys below 2^40.
  ADAQP_CHECK(part.global_num_nodes < (int64_t{1} << 40) / (1 + world),
              fmt::format("{}: {} nodes on {} workers exceed the 2^40 message keys; use "
                          "communication.exchange=rows",
                          kWhat, part.global_num_nodes, world));
  RelationFirstLayout out;
  Boundary& b = out.boundary;
  b.rank = part.rank;
  b.num_parts = world;

  // Receiver: per sender, its destinations in row order with their pairs' edges from it.
  std::vector<std::vector<int64_t>> to_sender(world);
  std::vector<int64_t> recv_rows;  // the owned row of each received row
  b.recv_offsets.assign(static_cast<size_t>(world) + 1, 0);
  std::vector<std::pair<int32_t, int64_t>> edges;  // (relation, source position)
  for (int s = 0; s < world; ++s) {
    b.recv_offsets[s] = static_cast<int64_t>(recv_rows.size());
    if (s == part.rank || part.halo_count_from(s) == 0) continue;
    const int64_t first = part.halo_offsets[s], count = part.halo_count_from(s);
    std::vector<int64_t>& msg = to_sender[s];
    msg.push_back(0);
    for (int64_t i = 0; i < part.num_owned(); ++i) {
      edges.clear();
      for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
        const int64_t u = part.halo_indices[e] - first;
        if (u >= 0 && u < count) edges.emplace_back(part.halo_relations[e], u);
      }
      if (edges.empty()) continue;
      std::sort(edges.begin(), edges.end());
      ++msg[0];
      recv_rows.push_back(i);
      b.recv_keys.push_back(partial_row_key(part, s, part.owned_gid[i]));
      msg.push_back(part.owned_gid[i]);
      const size_t pairs_at = msg.size();
      msg.push_back(0);
      const std::vector<std::pair<int32_t, int64_t>> degrees = relation_degrees(part, i);
      for (size_t a = 0; a < edges.size();) {
        size_t z = a;
        while (z < edges.size() && edges[z].first == edges[a].first) ++z;
        const auto d = std::lower_bound(degrees.begin(), degrees.end(),
                                        std::make_pair(edges[a].first, int64_t{0}));
        ADAQP_CHECK(d != degrees.end() && d->first == edges[a].first,
                    "relation-first layout: a cut edge's relation without a degree");
        ++msg[pairs_at];
        msg.push_back(edges[a].first);
        msg.push_back(d->second);
        msg.push_back(static_cast<int64_t>(z - a));
        for (; a < z; ++a) msg.push_back(edges[a].second);
      }
    }
  }
  b.recv_offsets[world] = static_cast<int64_t>(recv_rows.size());
  out.halo_indptr.assign(static_cast<size_t>(part.num_owned()) + 1, 0);
  for (const int64_t i : recv_rows) ++out.halo_indptr[i + 1];
  for (int64_t i = 0; i < part.num_owned(); ++i) out.halo_indptr[i + 1] += out.halo_indptr[i];
  out.halo_indices.resize(recv_rows.size());
  std::vector<int64_t> fill(out.halo_indptr.begin(), out.halo_indptr.end() - 1);
  for (size_t c = 0; c < recv_rows.size(); ++c)
    out.halo_indices[fill[recv_rows[c]]++] = static_cast<int32_t>(c);

  // Sender: the rows each receiver asked for, in its order.
  const std::vector<std::vector<int64_t>> from_receiver =
      exchange_detail::exchange_lists(comm, to_sender, kRelationFirstTag, kWhat);
  b.send_offsets.assign(static_cast<size_t>(world) + 1, 0);
  for (int r = 0; r < world; ++r) {
    b.send_offsets[r] = static_cast<int64_t>(b.send_keys.size());
    if (r == part.rank) continue;
    const int64_t count = part.send_count_to(r), first = part.send_offsets[r];
    if (from_receiver[r].empty() && count == 0) continue;
    ListReader in(from_receiver[r], r, kWhat);
    const int64_t destinations = in.next("destination count", 0, part.global_num_nodes);
    for (int64_t k = 0; k < destinations; ++k) {
      const int64_t row = static_cast<int64_t>(b.send_keys.size());
      const int64_t dst = in.next("destination", 0, part.global_num_nodes - 1);
      b.send_keys.push_back(partial_row_key(part, part.rank, dst));
      const int64_t pairs = in.next("pair count", 1, part.num_relations);
      int64_t last_relation = -1;
      for (int64_t p = 0; p < pairs; ++p) {
        const int64_t relation = in.next("relation", last_relation + 1, part.num_relations - 1);
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
