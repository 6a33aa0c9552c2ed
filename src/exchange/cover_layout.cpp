#include "adaqp/exchange/cover_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/partition/boundary_cover.h"
#include "peer_lists.h"

namespace adaqp {

namespace {

using exchange_detail::ListReader;

constexpr int kCoverTag = 32764;
constexpr const char* kCoverWhat = "cover layout";

}  // namespace

// The list a receiver sends each sender: the number of source rows and each one's position in the
// sender's send list to the receiver (= in the receiver's halo block from the sender), then the
// number of partial rows and, for each, its destination's global id and in-degree, its number of
// edges and their sources' positions.
CoverLayout cover_layout(const Part& part, Communicator& comm) {
  ADAQP_CHECK(comm.rank() == part.rank && comm.size() == part.num_parts,
              fmt::format("cover layout of part {} of {} on rank {} of {}", part.rank,
                          part.num_parts, comm.rank(), comm.size()));
  const int world = part.num_parts;
  // Partial rows' keys reach global_num_nodes * (1 + world); the noise counters take keys below
  // 2^40 (common/philox.h).
  ADAQP_CHECK(part.global_num_nodes < (int64_t{1} << 40) / (1 + world),
              fmt::format("cover layout: {} nodes on {} workers exceed the 2^40 message keys; use "
                          "communication.exchange=rows",
                          part.global_num_nodes, world));
  CoverLayout out;
  Boundary& b = out.boundary;
  b.rank = part.rank;
  b.num_parts = world;

  // Receiver: each pair's cover; edge_col[e] is the received row that carries halo edge e.
  std::vector<int64_t> edge_col(static_cast<size_t>(part.num_halo_edges()), -1);
  std::vector<int64_t> partial_of(static_cast<size_t>(part.num_owned()), -1);
  std::vector<std::vector<int64_t>> to_sender(world);
  b.recv_offsets.assign(static_cast<size_t>(world) + 1, 0);
  int64_t next = 0;
  for (int s = 0; s < world; ++s) {
    b.recv_offsets[s] = next;
    if (s == part.rank || part.halo_count_from(s) == 0) continue;
    std::vector<int64_t> dst_rows;
    const Bipartite g = boundary_graph(part, s, &dst_rows);
    const VertexCover cover = minimum_vertex_cover(g);
    const int64_t first = part.halo_offsets[s];
    std::vector<int64_t> recv_of_source(static_cast<size_t>(g.num_left()), -1);
    std::vector<int64_t>& msg = to_sender[s];
    msg.push_back(cover.num_left);
    for (int64_t u = 0; u < g.num_left(); ++u) {
      if (cover.left[u] == 0) continue;
      recv_of_source[u] = next++;
      b.recv_keys.push_back(part.halo_gid[first + u]);
      out.recv_out_degree.push_back(part.halo_out_degree[first + u]);
      msg.push_back(u);
    }
    msg.push_back(cover.num_right);
    for (int64_t v = 0; v < g.num_right; ++v) {
      if (cover.right[v] == 0) continue;
      const int64_t i = dst_rows[v];
      partial_of[i] = next++;
      b.recv_keys.push_back(partial_row_key(part, s, part.owned_gid[i]));
      out.recv_out_degree.push_back(-1);
      msg.push_back(part.owned_gid[i]);
      msg.push_back(part.owned_in_degree[i]);
      const size_t count_at = msg.size();
      msg.push_back(0);
      for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
        const int64_t u = part.halo_indices[e] - first;
        if (u < 0 || u >= g.num_left() || cover.left[u] != 0) continue;
        msg.push_back(u);
        ++msg[count_at];
      }
    }
    for (const int64_t i : dst_rows) {
      for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
        const int64_t u = part.halo_indices[e] - first;
        if (u < 0 || u >= g.num_left()) continue;
        edge_col[e] = cover.left[u] != 0 ? recv_of_source[u] : partial_of[i];
        ADAQP_CHECK(edge_col[e] >= 0, "cover layout: a cut edge outside the cover");
      }
      partial_of[i] = -1;
    }
  }
  b.recv_offsets[world] = next;

  // A'_halo: per row its source columns (a duplicate edge twice, as in the rows layout), and each
  // partial column once (at most one per sender, so the search is short).
  out.halo_indptr.assign(static_cast<size_t>(part.num_owned()) + 1, 0);
  std::vector<int64_t> cols, partials;
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    cols.clear();
    partials.clear();
    for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
      const int64_t c = edge_col[e];
      if (out.recv_out_degree[c] >= 0) {
        cols.push_back(c);
      } else if (std::find(partials.begin(), partials.end(), c) == partials.end()) {
        partials.push_back(c);
        cols.push_back(c);
      }
    }
    std::sort(cols.begin(), cols.end());
    for (const int64_t c : cols) out.halo_indices.push_back(static_cast<int32_t>(c));
    out.halo_indptr[i + 1] = static_cast<int64_t>(out.halo_indices.size());
  }

  // Sender: the rows each receiver asked for, in its order.
  const std::vector<std::vector<int64_t>> from_receiver =
      exchange_detail::exchange_lists(comm, to_sender, kCoverTag, kCoverWhat);
  b.send_offsets.assign(static_cast<size_t>(world) + 1, 0);
  out.send_indptr.push_back(0);
  for (int r = 0; r < world; ++r) {
    b.send_offsets[r] = static_cast<int64_t>(b.send_keys.size());
    if (r == part.rank) continue;
    const int64_t count = part.send_count_to(r), first = part.send_offsets[r];
    if (from_receiver[r].empty() && count == 0) continue;
    ListReader in(from_receiver[r], r, kCoverWhat);
    const int64_t sources = in.next("source row count", 0, count);
    for (int64_t k = 0; k < sources; ++k) {
      const int64_t j = part.send_idx[first + in.next("source row position", 0, count - 1)];
      out.send_indices.push_back(static_cast<int32_t>(j));
      out.send_indptr.push_back(static_cast<int64_t>(out.send_indices.size()));
      out.send_dst_in_degree.push_back(-1);
      b.send_keys.push_back(part.owned_gid[j]);
    }
    const int64_t partials = in.next("partial row count", 0, part.global_num_nodes);
    for (int64_t k = 0; k < partials; ++k) {
      const int64_t dst = in.next("partial row destination", 0, part.global_num_nodes - 1);
      out.send_dst_in_degree.push_back(
          exchange_detail::read_partial_sum(in, part, first, count, &out.send_indices));
      out.send_indptr.push_back(static_cast<int64_t>(out.send_indices.size()));
      b.send_keys.push_back(partial_row_key(part, part.rank, dst));
    }
    in.expect_end();
  }
  b.send_offsets[world] = static_cast<int64_t>(b.send_keys.size());
  return out;
}

}  // namespace adaqp
