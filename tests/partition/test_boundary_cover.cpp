// Boundary covers (partition/boundary_cover.h): the matching and König's cover against brute force
// on small random bipartite graphs, a long augmenting chain, and the covers of real parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "adaqp/graph/generator.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/boundary_cover.h"

namespace adaqp {
namespace {

Bipartite random_bipartite(std::mt19937_64& gen, int left, int right, double p) {
  std::bernoulli_distribution edge(p);
  Bipartite g;
  g.num_right = right;
  for (int u = 0; u < left; ++u) {
    for (int v = 0; v < right; ++v)
      if (edge(gen)) g.right.push_back(v);
    g.offsets.push_back(static_cast<int64_t>(g.right.size()));
  }
  return g;
}

// The smallest cover by brute force: choose the left vertices S in the cover; every edge of the
// others needs its right end, so the size is |S| + |N(L \ S)|.
int64_t brute_force_cover(const Bipartite& g) {
  const int64_t n = g.num_left();
  int64_t best = n + g.num_right;
  for (uint32_t s = 0; s < (1u << n); ++s) {
    std::vector<uint8_t> needed(static_cast<size_t>(g.num_right), 0);
    int64_t size = 0;
    for (int64_t u = 0; u < n; ++u) {
      if (s >> u & 1) {
        ++size;
        continue;
      }
      for (int64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) needed[g.right[e]] = 1;
    }
    for (uint8_t x : needed) size += x;
    best = std::min(best, size);
  }
  return best;
}

void expect_valid(const Bipartite& g, const Matching& m, const VertexCover& c) {
  int64_t matched = 0;
  for (int64_t u = 0; u < g.num_left(); ++u) {
    const int64_t v = m.match_left[u];
    if (v < 0) continue;
    ++matched;
    ASSERT_EQ(m.match_right[v], u);
    EXPECT_TRUE(std::find(g.right.begin() + g.offsets[u], g.right.begin() + g.offsets[u + 1], v) !=
                g.right.begin() + g.offsets[u + 1])
        << "matched pair " << u << "-" << v << " is not an edge";
  }
  EXPECT_EQ(matched, m.size);
  for (int64_t u = 0; u < g.num_left(); ++u)
    for (int64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e)
      ASSERT_TRUE(c.left[u] || c.right[g.right[e]]) << "edge " << u << "-" << g.right[e];
  EXPECT_EQ(c.size(), m.size) << "König: a minimum cover is as large as a maximum matching";
}

TEST(BoundaryCover, MatchingAndCoverAreOptimalOnRandomGraphs) {
  std::mt19937_64 gen(5);
  for (int trial = 0; trial < 400; ++trial) {
    const int left = 1 + static_cast<int>(gen() % 10), right = 1 + static_cast<int>(gen() % 10);
    const double p = 0.05 + 0.6 * static_cast<double>(gen() % 100) / 100;
    const Bipartite g = random_bipartite(gen, left, right, p);
    const Matching m = maximum_matching(g);
    const VertexCover c = minimum_vertex_cover(g);
    expect_valid(g, m, c);
    ASSERT_EQ(c.size(), brute_force_cover(g)) << "trial " << trial;
  }
}

TEST(BoundaryCover, LongAugmentingChainNeedsNoRecursion) {
  // Left i < n - 1 joins right i + 1 (listed first) and right i; left n - 1 only right n - 1. The
  // first phase matches left i to right i + 1 and leaves left n - 1 free; the second finds the one
  // augmenting path, through all 400,000 vertices, with the iterative search.
  const int64_t n = 200000;
  Bipartite g;
  g.num_right = n;
  for (int64_t u = 0; u < n; ++u) {
    if (u + 1 < n) g.right.push_back(u + 1);
    g.right.push_back(u);
    g.offsets.push_back(static_cast<int64_t>(g.right.size()));
  }
  const Matching m = maximum_matching(g);
  EXPECT_EQ(m.size, n);
  for (int64_t u = 0; u < n; ++u) ASSERT_EQ(m.match_left[u], u);
  expect_valid(g, m, minimum_vertex_cover(g));
}

TEST(BoundaryCover, CoversOfPartsCarryEveryCutEdgeInFewerRows) {
  GeneratorOptions o;
  o.num_nodes = 3000;
  o.num_classes = 5;
  o.feat_dim = 4;
  o.avg_degree = 8;
  o.seed = 3;
  const Graph graph = generate_graph(o);
  for (PartitionMethod method : {PartitionMethod::kMetis, PartitionMethod::kRandom}) {
    PartitionOptions opt;
    opt.method = method;
    opt.parts = 4;
    const std::vector<int32_t> owner = assign_parts(graph, opt);
    int64_t rows = 0, cover = 0;
    for (int r = 0; r < 4; ++r) {
      const Part part = build_part(graph, owner, r);
      int64_t cut = 0;
      for (const PairCover& p : boundary_covers(part)) {
        EXPECT_EQ(p.receiver, r);
        EXPECT_EQ(p.source_rows, part.halo_count_from(p.sender));
        EXPECT_LE(p.cover_rows(), p.source_rows);
        std::vector<int64_t> destinations;
        const Bipartite g = boundary_graph(part, p.sender, &destinations);
        expect_valid(g, maximum_matching(g), minimum_vertex_cover(g));
        for (int64_t d : destinations) EXPECT_GE(d, part.num_central) << "a central row";
        cut += p.cut_edges;
        rows += p.source_rows;
        cover += p.cover_rows();
      }
      EXPECT_EQ(cut, part.num_halo_edges());
    }
    EXPECT_LT(cover, rows) << to_string(method);
  }
}

}  // namespace
}  // namespace adaqp
