#include "adaqp/partition/boundary_cover.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max();

// Hopcroft-Karp's layering: distances from the free left vertices along alternating paths; true if
// some free right vertex is reachable (an augmenting path exists).
bool layer(const Bipartite& g, const Matching& m, std::vector<int64_t>& dist,
           std::vector<int64_t>& queue) {
  queue.clear();
  for (int64_t u = 0; u < g.num_left(); ++u) {
    dist[u] = m.match_left[u] < 0 ? 0 : kInfinity;
    if (dist[u] == 0) queue.push_back(u);
  }
  bool found = false;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int64_t u = queue[head];
    for (int64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      const int64_t w = m.match_right[g.right[e]];
      if (w < 0) {
        found = true;
      } else if (dist[w] == kInfinity) {
        dist[w] = dist[u] + 1;
        queue.push_back(w);
      }
    }
  }
  return found;
}

// Augments along one shortest alternating path from free left vertex `root`, if there is one in
// the layering (iterative depth-first search: paths may be long).
bool augment(const Bipartite& g, Matching& m, int64_t root, std::vector<int64_t>& dist,
             std::vector<int64_t>& next_edge, std::vector<int64_t>& stack) {
  stack.assign(1, root);
  while (!stack.empty()) {
    const int64_t u = stack.back();
    bool advanced = false;
    for (int64_t& e = next_edge[u]; e < g.offsets[u + 1]; ++e) {
      const int64_t v = g.right[e];
      const int64_t w = m.match_right[v];
      if (w < 0) {
        // Free right vertex: flip the path root .. u -> v.
        for (size_t i = stack.size(); i-- > 0;) {
          const int64_t x = stack[i];
          const int64_t y = g.right[next_edge[x]];
          m.match_right[y] = x;
          m.match_left[x] = y;
        }
        return true;
      }
      if (dist[w] == dist[u] + 1) {
        stack.push_back(w);
        advanced = true;
        break;
      }
    }
    if (!advanced) {
      dist[u] = kInfinity;  // a dead end in this phase
      stack.pop_back();
      if (!stack.empty()) ++next_edge[stack.back()];
    }
  }
  return false;
}

}  // namespace

Matching maximum_matching(const Bipartite& g) {
  const int64_t n = g.num_left();
  ADAQP_CHECK(
      n >= 0 && g.offsets.front() == 0 && g.offsets.back() == static_cast<int64_t>(g.right.size()),
      "bipartite CSR offsets");
  for (int64_t v : g.right) ADAQP_CHECK(v >= 0 && v < g.num_right, "bipartite right vertex");
  Matching m;
  m.match_left.assign(static_cast<size_t>(n), -1);
  m.match_right.assign(static_cast<size_t>(g.num_right), -1);
  std::vector<int64_t> dist(static_cast<size_t>(n)), queue, next_edge(static_cast<size_t>(n)),
      stack;
  while (layer(g, m, dist, queue)) {
    for (int64_t u = 0; u < n; ++u) next_edge[u] = g.offsets[u];
    for (int64_t u = 0; u < n; ++u) {
      if (m.match_left[u] < 0 && dist[u] == 0 && augment(g, m, u, dist, next_edge, stack)) ++m.size;
    }
  }
  return m;
}

VertexCover minimum_vertex_cover(const Bipartite& g) {
  const Matching m = maximum_matching(g);
  // König: Z = vertices reachable from free left vertices by alternating paths (any edge left to
  // right, matching edges right to left); the cover is (L \ Z) + (R & Z).
  std::vector<uint8_t> seen_left(static_cast<size_t>(g.num_left()), 0),
      seen_right(static_cast<size_t>(g.num_right), 0);
  std::vector<int64_t> queue;
  for (int64_t u = 0; u < g.num_left(); ++u) {
    if (m.match_left[u] < 0) {
      seen_left[u] = 1;
      queue.push_back(u);
    }
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const int64_t u = queue[head];
    for (int64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      const int64_t v = g.right[e];
      if (seen_right[v]) continue;
      seen_right[v] = 1;
      const int64_t w = m.match_right[v];
      if (w >= 0 && !seen_left[w]) {
        seen_left[w] = 1;
        queue.push_back(w);
      }
    }
  }
  VertexCover c;
  c.left.resize(seen_left.size());
  c.right = seen_right;
  for (size_t u = 0; u < seen_left.size(); ++u) {
    c.left[u] = seen_left[u] ? 0 : 1;
    c.num_left += c.left[u];
  }
  for (uint8_t r : c.right) c.num_right += r;
  ADAQP_CHECK(c.size() == m.size, "König cover size equals the maximum matching");
  return c;
}

Bipartite boundary_graph(const Part& part, int sender, std::vector<int64_t>* destination_rows) {
  ADAQP_CHECK(sender >= 0 && sender < part.num_parts, "boundary graph sender");
  const int64_t first = part.halo_offsets[sender], count = part.halo_count_from(sender);
  // Right vertices: the owned rows with an in-edge from the sender's halo block, in row order.
  std::vector<int64_t> right_of_row(static_cast<size_t>(part.num_owned()), -1);
  std::vector<int64_t> rows;
  std::vector<int64_t> degree(static_cast<size_t>(count), 0);
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
      const int64_t k = part.halo_indices[e] - first;
      if (k < 0 || k >= count) continue;
      if (right_of_row[i] < 0) {
        right_of_row[i] = static_cast<int64_t>(rows.size());
        rows.push_back(i);
      }
      ++degree[k];
    }
  }
  Bipartite g;
  g.num_right = static_cast<int64_t>(rows.size());
  g.offsets.assign(static_cast<size_t>(count) + 1, 0);
  for (int64_t k = 0; k < count; ++k) g.offsets[k + 1] = g.offsets[k] + degree[k];
  g.right.resize(static_cast<size_t>(g.offsets.back()));
  std::vector<int64_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
      const int64_t k = part.halo_indices[e] - first;
      if (k >= 0 && k < count) g.right[fill[k]++] = right_of_row[i];
    }
  }
  if (destination_rows != nullptr) *destination_rows = std::move(rows);
  return g;
}

Bipartite relation_boundary_graph(const Part& part, int sender) {
  ADAQP_CHECK(sender >= 0 && sender < part.num_parts, "boundary graph sender");
  ADAQP_CHECK(part.heterogeneous(), "relation boundary graph of a part without types");
  const int64_t first = part.halo_offsets[sender], count = part.halo_count_from(sender);
  // Right vertices in (row, relation) order: each row's edges from the block, by relation.
  std::vector<std::vector<int64_t>> adjacent(static_cast<size_t>(count));
  Bipartite g;
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    std::vector<std::pair<int32_t, int64_t>> edges;  // (relation, left vertex)
    for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
      const int64_t k = part.halo_indices[e] - first;
      if (k >= 0 && k < count) edges.emplace_back(part.halo_relations[e], k);
    }
    std::sort(edges.begin(), edges.end());
    for (size_t a = 0; a < edges.size(); ++a) {
      if (a == 0 || edges[a].first != edges[a - 1].first) ++g.num_right;
      adjacent[edges[a].second].push_back(g.num_right - 1);
    }
  }
  g.offsets.assign(static_cast<size_t>(count) + 1, 0);
  for (int64_t k = 0; k < count; ++k) {
    g.offsets[k + 1] = g.offsets[k] + static_cast<int64_t>(adjacent[k].size());
    g.right.insert(g.right.end(), adjacent[k].begin(), adjacent[k].end());
  }
  return g;
}

Bipartite relation_first_graph(const Part& part, int sender, std::vector<SourceRelation>* sources,
                               std::vector<int64_t>* destination_rows) {
  ADAQP_CHECK(sender >= 0 && sender < part.num_parts, "boundary graph sender");
  ADAQP_CHECK(part.heterogeneous(), "relation-first boundary graph of a part without types");
  const int64_t first = part.halo_offsets[sender], count = part.halo_count_from(sender);
  struct Edge {
    SourceRelation left;
    int64_t right;
  };
  std::vector<Edge> edges;
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < part.num_owned(); ++i) {
    bool has = false;
    for (int64_t e = part.halo_indptr[i]; e < part.halo_indptr[i + 1]; ++e) {
      const int64_t u = part.halo_indices[e] - first;
      if (u < 0 || u >= count) continue;
      if (!has) rows.push_back(i);
      has = true;
      edges.push_back({{u, part.halo_relations[e]}, static_cast<int64_t>(rows.size()) - 1});
    }
  }
  const auto before = [](const Edge& a, const Edge& b) {
    return a.left < b.left || (a.left == b.left && a.right < b.right);
  };
  const auto same = [](const Edge& a, const Edge& b) {
    return a.left == b.left && a.right == b.right;
  };
  std::sort(edges.begin(), edges.end(), before);
  edges.erase(std::unique(edges.begin(), edges.end(), same), edges.end());
  Bipartite g;
  g.num_right = static_cast<int64_t>(rows.size());
  std::vector<SourceRelation> left;
  for (const Edge& e : edges) {
    if (left.empty() || !(left.back() == e.left)) {
      left.push_back(e.left);
      g.offsets.push_back(g.offsets.back());
    }
    g.right.push_back(e.right);
    ++g.offsets.back();
  }
  if (sources != nullptr) *sources = std::move(left);
  if (destination_rows != nullptr) *destination_rows = std::move(rows);
  return g;
}

int64_t relation_first_rows(const Part& part) {
  int64_t rows = 0;
  for (int s = 0; s < part.num_parts; ++s) {
    if (s == part.rank || part.halo_count_from(s) == 0) continue;
    rows += minimum_vertex_cover(relation_first_graph(part, s, nullptr, nullptr)).size();
  }
  return rows;
}

std::vector<PairCover> boundary_covers(const Part& part) {
  std::vector<PairCover> out;
  for (int s = 0; s < part.num_parts; ++s) {
    if (s == part.rank || part.halo_count_from(s) == 0) continue;
    const Bipartite g = boundary_graph(part, s, nullptr);
    const VertexCover c = minimum_vertex_cover(g);
    PairCover p;
    p.sender = s;
    p.receiver = part.rank;
    p.cut_edges = static_cast<int64_t>(g.right.size());
    p.source_rows = g.num_left();
    p.cover_sources = c.num_left;
    p.cover_partials = c.num_right;
    if (part.heterogeneous()) {
      const VertexCover r = minimum_vertex_cover(relation_boundary_graph(part, s));
      p.relation_cover_sources = r.num_left;
      p.relation_cover_partials = r.num_right;
      const Bipartite first = relation_first_graph(part, s, nullptr, nullptr);
      const VertexCover f = minimum_vertex_cover(first);
      p.destinations = first.num_right;
      p.first_cover_sources = f.num_left;
      p.first_cover_partials = f.num_right;
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace adaqp
