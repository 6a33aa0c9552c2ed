#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "test_util.h"

namespace adaqp {
namespace {

Graph symmetric_graph() {
  GeneratorOptions o;
  o.num_nodes = 700;
  o.num_classes = 4;
  o.feat_dim = 3;
  o.avg_degree = 8;
  o.seed = 3;
  Graph g = generate_graph(o);
  GraphTransform t;
  t.self_loops = true;
  apply_transform(g, t);
  return g;
}

// A directed graph with duplicate edges: a generated graph without a third of its edges u -> v with
// u < v (the reverse edges kept, so in- and out-neighbourhoods differ) and every edge with
// (u + v) % 11 == 0 doubled.
Graph directed_graph() {
  Graph g = symmetric_graph();
  std::vector<int64_t> indptr{0}, indices;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      if (u < v && (u * 7 + v * 13) % 3 == 0) continue;
      indices.push_back(u);
      if ((u + v) % 11 == 0) indices.push_back(u);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  g.indptr = std::move(indptr);
  g.indices = std::move(indices);
  return g;
}

std::vector<std::pair<int64_t, int64_t>> all_edges(const Graph& g) {
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t v = 0; v < g.num_nodes; ++v)
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) edges.emplace_back(g.indices[e], v);
  std::sort(edges.begin(), edges.end());
  return edges;
}

std::vector<int64_t> owned_of(const std::vector<int64_t>& gids, const std::vector<int32_t>& owner,
                              int r, const Part& p) {
  std::map<int64_t, int64_t> local;
  for (int64_t i = 0; i < p.num_owned(); ++i) local[p.owned_gid[i]] = i;
  std::vector<int64_t> out;
  for (int64_t v : gids)
    if (owner[v] == r) out.push_back(local.at(v));
  std::sort(out.begin(), out.end());
  return out;
}

// Every invariant of part.h, recomputed from the graph.
void check_parts(const Graph& g, const std::vector<int32_t>& owner, int parts) {
  std::vector<Part> ps;
  for (int r = 0; r < parts; ++r) {
    ps.push_back(build_part(g, owner, r));
    // Mostly-zero features (Cora's) come as CSR: checked through their dense rows.
    densify_features(ps.back());
  }
  const std::vector<int64_t> out_degree = g.out_degrees();
  std::vector<int> owned_count(g.num_nodes, 0);
  std::vector<std::pair<int64_t, int64_t>> rebuilt;
  for (int r = 0; r < parts; ++r) {
    const Part& p = ps[r];
    SCOPED_TRACE("part " + std::to_string(r) + " of " + std::to_string(parts));
    ASSERT_EQ(p.rank, r);
    ASSERT_EQ(p.num_parts, parts);
    ASSERT_EQ(p.global_num_nodes, g.num_nodes);
    // Owned: central then marginal, each ascending; the classification matches the graph.
    std::vector<int64_t> central, marginal;
    for (int64_t v = 0; v < g.num_nodes; ++v) {
      if (owner[v] != r) continue;
      bool remote = false;
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) remote |= owner[g.indices[e]] != r;
      (remote ? marginal : central).push_back(v);
    }
    std::vector<int64_t> expected_owned = central;
    expected_owned.insert(expected_owned.end(), marginal.begin(), marginal.end());
    ASSERT_EQ(p.owned_gid, expected_owned);
    ASSERT_EQ(p.num_central, static_cast<int64_t>(central.size()));
    for (int64_t v : p.owned_gid) ++owned_count[v];
    // Halo: exactly the remote in-neighbours, grouped by owner, ascending within a block.
    std::set<std::pair<int32_t, int64_t>> halo;
    for (int64_t v : marginal)
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
        if (owner[g.indices[e]] != r) halo.emplace(owner[g.indices[e]], g.indices[e]);
    std::vector<int64_t> expected_halo;
    std::vector<int64_t> expected_offsets(parts + 1, 0);
    for (const auto& [q, u] : halo) {
      expected_halo.push_back(u);
      ++expected_offsets[q + 1];
    }
    for (int q = 0; q < parts; ++q) expected_offsets[q + 1] += expected_offsets[q];
    ASSERT_EQ(p.halo_gid, expected_halo);
    ASSERT_EQ(p.halo_offsets, expected_offsets);
    // Adjacency: sorted columns, central rows without halo edges, marginal rows with some.
    ASSERT_EQ(p.local_indptr.size(), static_cast<size_t>(p.num_owned() + 1));
    ASSERT_EQ(p.halo_indptr.size(), static_cast<size_t>(p.num_owned() + 1));
    for (int64_t i = 0; i < p.num_owned(); ++i) {
      const int64_t v = p.owned_gid[i];
      const int64_t halo_edges = p.halo_indptr[i + 1] - p.halo_indptr[i];
      EXPECT_EQ(halo_edges > 0, i >= p.num_central) << "row " << i;
      for (int64_t e = p.local_indptr[i]; e < p.local_indptr[i + 1]; ++e) {
        if (e > p.local_indptr[i]) {
          ASSERT_LE(p.local_indices[e - 1], p.local_indices[e]);
        }
        rebuilt.emplace_back(p.owned_gid[p.local_indices[e]], v);
      }
      for (int64_t e = p.halo_indptr[i]; e < p.halo_indptr[i + 1]; ++e) {
        if (e > p.halo_indptr[i]) {
          ASSERT_LE(p.halo_indices[e - 1], p.halo_indices[e]);
        }
        rebuilt.emplace_back(p.halo_gid[p.halo_indices[e]], v);
      }
      // Global degrees.
      ASSERT_EQ(p.owned_in_degree[i], g.in_degree(v));
      ASSERT_EQ(p.owned_out_degree[i], out_degree[v]);
    }
    for (int64_t h = 0; h < p.num_halo(); ++h) {
      ASSERT_EQ(p.halo_in_degree[h], g.in_degree(p.halo_gid[h]));
      ASSERT_EQ(p.halo_out_degree[h], out_degree[p.halo_gid[h]]);
    }
    // Node data and splits.
    ASSERT_EQ(p.feat_dim, g.feat_dim);
    for (int64_t i = 0; i < p.num_owned(); ++i) {
      ASSERT_EQ(p.labels[i], g.labels[p.owned_gid[i]]);
      for (int64_t j = 0; j < g.feat_dim; ++j)
        ASSERT_EQ(p.features[i * g.feat_dim + j], g.features[p.owned_gid[i] * g.feat_dim + j]);
    }
    ASSERT_EQ(p.global_split_counts, (std::vector<int64_t>{static_cast<int64_t>(g.train.size()),
                                                           static_cast<int64_t>(g.valid.size()),
                                                           static_cast<int64_t>(g.test.size())}));
    ASSERT_EQ(p.train_idx, owned_of(g.train, owner, r, p));
    ASSERT_EQ(p.valid_idx, owned_of(g.valid, owner, r, p));
    ASSERT_EQ(p.test_idx, owned_of(g.test, owner, r, p));
  }
  for (int64_t v = 0; v < g.num_nodes; ++v) ASSERT_EQ(owned_count[v], 1) << "node " << v;
  std::sort(rebuilt.begin(), rebuilt.end());
  ASSERT_EQ(rebuilt, all_edges(g)) << "the parts' in-edges are not the graph's edges";
  // Each send list of p for q is q's halo block from p, in order.
  for (int p = 0; p < parts; ++p) {
    ASSERT_EQ(ps[p].send_offsets.size(), static_cast<size_t>(parts + 1));
    for (int q = 0; q < parts; ++q) {
      ASSERT_EQ(ps[p].send_count_to(q), ps[q].halo_count_from(p)) << p << " -> " << q;
      for (int64_t k = 0; k < ps[p].send_count_to(q); ++k)
        ASSERT_EQ(ps[p].owned_gid[ps[p].send_idx[ps[p].send_offsets[q] + k]],
                  ps[q].halo_gid[ps[q].halo_offsets[p] + k]);
    }
  }
}

void check_all_methods(const Graph& g) {
  for (PartitionMethod method :
       {PartitionMethod::kMetis, PartitionMethod::kRandom, PartitionMethod::kContiguous}) {
    for (int parts : {1, 2, 3, 4, 7}) {
      SCOPED_TRACE(std::string(to_string(method)) + " W=" + std::to_string(parts));
      PartitionOptions opt;
      opt.method = method;
      opt.parts = parts;
      opt.seed = 5;
      const std::vector<int32_t> owner = assign_parts(g, opt);
      ASSERT_EQ(owner, assign_parts(g, opt)) << "not deterministic";
      check_parts(g, owner, parts);
      if (parts == 1) {
        EXPECT_EQ(edge_cut(g, owner), 0);
      }
    }
  }
}

TEST(Partition, InvariantsOnASymmetricGraphWithSelfLoops) {
  check_all_methods(symmetric_graph());
}

TEST(Partition, InvariantsOnADirectedGraphWithDuplicateEdges) {
  const Graph g = directed_graph();
  const std::vector<std::pair<int64_t, int64_t>> edges = all_edges(g);
  const std::set<std::pair<int64_t, int64_t>> present(edges.begin(), edges.end());
  ASSERT_TRUE(std::any_of(edges.begin(), edges.end(), [&](const auto& e) {
    return present.count({e.second, e.first}) == 0;
  })) << "the graph is symmetric";
  ASSERT_LT(present.size(), edges.size()) << "no duplicate edges";
  check_all_methods(g);
}

TEST(Partition, InvariantsOnCora) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "cora");
  DatasetSpec spec;
  spec.format = DatasetFormat::kOgb;
  spec.path = dir;
  spec.transform.symmetrize = true;
  check_all_methods(load_dataset(spec));
}

TEST(Partition, MetisCutsCoraFarBelowRandom) {
  ADAQP_REQUIRE_SHARED_DATASET(dir, "cora");
  DatasetSpec spec;
  spec.format = DatasetFormat::kOgb;
  spec.path = dir;
  spec.transform.symmetrize = true;
  const Graph g = load_dataset(spec);
  PartitionOptions opt;
  opt.parts = 4;
  const int64_t metis = edge_cut(g, assign_parts(g, opt));
  opt.method = PartitionMethod::kRandom;
  const int64_t random = edge_cut(g, assign_parts(g, opt));
  std::cout << "Cora W=4 edge cut: metis " << metis << ", random " << random << " of "
            << g.num_edges() << " edges\n";
  RecordProperty("metis_edge_cut", std::to_string(metis));
  RecordProperty("random_edge_cut", std::to_string(random));
  EXPECT_GT(metis, 0);
  EXPECT_LT(metis, random / 2);
}

// METIS and PT-Scotch seed a generator on which 0 and 1 give one sequence: partition.seed 1 gave
// seed 0's parts (found by a review, 2026-12-08). Each seed now gives its own library seed.
TEST(Partition, MetisSeedsZeroOneAndTwoGiveThreePartitions) {
  GeneratorOptions o;
  o.num_nodes = 3000;
  o.seed = 5;
  const Graph g = generate_graph(o);
  PartitionOptions opt;
  opt.parts = 3;
  std::vector<std::vector<int32_t>> owners;
  for (uint64_t seed : {0, 1, 2}) {
    opt.seed = seed;
    owners.push_back(assign_parts(g, opt));
  }
  EXPECT_NE(owners[0], owners[1]);
  EXPECT_NE(owners[1], owners[2]);
  EXPECT_NE(owners[0], owners[2]);
  EXPECT_EQ(library_seed(0, 100), 0u);
  EXPECT_EQ(library_seed(1, 100), 2u);
  EXPECT_EQ(library_seed(98, 100), 99u);
  EXPECT_EQ(library_seed(99, 100), 2u);  // wraps
}

// partition.sample_degree with METIS: the whole graph when no row exceeds the degree, and on a
// dense graph's sample (the degree docs/configuration.md suggests) a cut close to the whole
// graph's, far below random. METIS's cut moves by up to 20% from seed to seed here (34-42 thousand
// edges over seeds 0-5), more than the sample's cost: medians over three seeds are compared (a
// single seed's bound passed or failed by that seed's luck).
TEST(Partition, MetisOnASampleCutsCloseToTheWholeGraph) {
  GeneratorOptions o;
  o.num_nodes = 3000;
  o.num_classes = 6;
  o.avg_degree = 40;
  o.seed = 4;
  const Graph g = generate_graph(o);
  PartitionOptions opt;
  opt.parts = 4;
  int64_t max_degree = 0;
  for (int64_t v = 0; v < g.num_nodes; ++v) max_degree = std::max(max_degree, 2 * g.in_degree(v));
  std::vector<int64_t> cut_whole, cut_sample;
  for (uint64_t seed : {0, 1, 2}) {
    opt.seed = seed;
    opt.sample_degree = 0;
    const std::vector<int32_t> whole = assign_parts(g, opt);
    opt.sample_degree = max_degree;
    EXPECT_EQ(assign_parts(g, opt), whole) << "a sample keeping every row is the whole graph";
    opt.sample_degree = 12;
    const std::vector<int32_t> sample = assign_parts(g, opt);
    ASSERT_EQ(sample, assign_parts(g, opt)) << "not deterministic";
    check_parts(g, sample, opt.parts);
    cut_whole.push_back(edge_cut(g, whole));
    cut_sample.push_back(edge_cut(g, sample));
  }
  opt.method = PartitionMethod::kRandom;
  opt.sample_degree = 0;
  const int64_t cut_random = edge_cut(g, assign_parts(g, opt));
  std::sort(cut_whole.begin(), cut_whole.end());
  std::sort(cut_sample.begin(), cut_sample.end());
  std::cout << "edge cut at W=4, seeds 0-2: whole " << fmt::format("{}", fmt::join(cut_whole, " "))
            << ", sample of degree 12 " << fmt::format("{}", fmt::join(cut_sample, " "))
            << ", random " << cut_random << " of " << g.num_edges() << " edges\n";
  EXPECT_LT(cut_sample[1], cut_whole[1] * 11 / 10);
  EXPECT_LT(cut_sample[2], cut_random / 2);
}

TEST(Partition, ContiguousAndRandomAreBalancedAndEdgeCutCountsCrossingEdges) {
  // A directed path 0 -> 1 -> ... -> 9: contiguous into 3 parts ({0..3}, {4..6}, {7..9}) cuts 3->4
  // and 6->7.
  std::vector<int64_t> indptr{0, 0}, indices;
  for (int64_t v = 1; v < 10; ++v) {
    indices.push_back(v - 1);
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  Graph g;
  g.name = "path";
  g.num_nodes = 10;
  g.indptr = indptr;
  g.indices = indices;
  PartitionOptions opt;
  opt.method = PartitionMethod::kContiguous;
  opt.parts = 3;
  const std::vector<int32_t> owner = assign_parts(g, opt);
  EXPECT_EQ(owner, (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(edge_cut(g, owner), 2);
  opt.method = PartitionMethod::kRandom;
  const std::vector<int32_t> shuffled = assign_parts(g, opt);
  std::vector<int> sizes(3, 0);
  for (int32_t r : shuffled) ++sizes[r];
  EXPECT_EQ(sizes, (std::vector<int>{4, 3, 3}));
  opt.seed = 1;
  EXPECT_NE(assign_parts(g, opt), shuffled);
}

// Largest per-part share (count / (total / parts)) of the node weights `w` under `owner`.
double max_share(const std::vector<int32_t>& owner, const std::vector<int64_t>& w, int parts) {
  std::vector<int64_t> per_part(parts, 0);
  int64_t total = 0;
  for (size_t v = 0; v < owner.size(); ++v) {
    per_part[owner[v]] += w[v];
    total += w[v];
  }
  return static_cast<double>(*std::max_element(per_part.begin(), per_part.end())) * parts /
         static_cast<double>(total);
}

TEST(Partition, MetisBalanceConstraintsBalanceTrainingNodesAndEdges) {
  // Training nodes = one whole class of a strongly homophilous graph with hubs: METIS alone keeps
  // the class together, so without the constraint one part gets far more than its share.
  GeneratorOptions o;
  o.num_nodes = 4000;
  o.num_classes = 4;
  o.feat_dim = 2;
  o.avg_degree = 8;
  o.homophily = 0.95;
  o.heavy_tailed = true;
  Graph g = generate_graph(o);
  g.train.clear();
  g.valid.clear();
  g.test.clear();
  std::vector<int64_t> is_train(g.num_nodes), degree(g.num_nodes), one(g.num_nodes, 1);
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    is_train[v] = g.labels[v] == 0;
    (is_train[v] ? g.train : g.test).push_back(v);
    degree[v] = g.in_degree(v);
  }
  PartitionOptions opt;
  opt.parts = 4;
  const std::vector<int32_t> plain = assign_parts(g, opt);
  opt.balance_train = true;
  const std::vector<int32_t> train_balanced = assign_parts(g, opt);
  opt.balance_edges = true;
  const std::vector<int32_t> both = assign_parts(g, opt);
  std::cout << "max train share: plain " << max_share(plain, is_train, 4) << ", balance_train "
            << max_share(train_balanced, is_train, 4) << ", both " << max_share(both, is_train, 4)
            << "; max in-edge share: plain " << max_share(plain, degree, 4) << ", both "
            << max_share(both, degree, 4) << "\n";
  EXPECT_GT(max_share(plain, is_train, 4), 1.5);
  EXPECT_LT(max_share(train_balanced, is_train, 4), 1.1);
  EXPECT_LT(max_share(both, is_train, 4), 1.1);
  EXPECT_LT(max_share(both, degree, 4), 1.1);
  for (const auto* owner : {&plain, &train_balanced, &both}) {
    EXPECT_LT(max_share(*owner, one, 4), 1.1);
  }
}

TEST(Partition, BadOptionsAreConfigErrors) {
  const Graph g = symmetric_graph();
  PartitionOptions opt;
  opt.parts = 0;
  EXPECT_NE(test::error_of<ConfigError>([&] { assign_parts(g, opt); }).find("partition.parts = 0"),
            std::string::npos);
  opt.parts = 701;
  EXPECT_NE(test::error_of<ConfigError>([&] { assign_parts(g, opt); }).find("more parts than"),
            std::string::npos);
}

}  // namespace
}  // namespace adaqp
