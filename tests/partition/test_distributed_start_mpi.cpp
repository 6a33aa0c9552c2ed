// The distributed start-up (partition.method ptscotch) against the serial path it replaces, at
// every world size the MPI tests run: slices of a graph, their fingerprint and symmetrisation, the
// NumPy range reader, parts built from slices (array for array build_part's for the same owners),
// and PT-Scotch's owners.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "adaqp/comm/all_to_all.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph_slice.h"
#include "adaqp/graph/npy.h"
#include "adaqp/graph/slice_loader.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/edge_sample.h"
#include "adaqp/partition/part_from_slices.h"
#include "adaqp/partition/partition_in_slices.h"
#include "adaqp/partition/ptscotch_partitioner.h"
#include "graph_expect.h"
#include "mpi_world.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

// A collective step (comm/communicator.h): runs f, then agrees with every rank; throws on every
// rank if any failed.
CollectiveStep agreeing_step(Communicator& comm) {
  return [&comm](const std::function<void()>& f) {
    std::exception_ptr error;
    try {
      f();
    } catch (...) {
      error = std::current_exception();
    }
    if (any_rank_failed(comm, error != nullptr)) {
      if (error) std::rethrow_exception(error);
      throw std::runtime_error("another rank failed");
    }
  };
}

// A generated graph with a heavy-tailed degree distribution, self-loops and some edges doubled (a
// multigraph: duplicates are kept by the loaders).
Graph test_graph(int64_t nodes, uint64_t seed) {
  GeneratorOptions o;
  o.num_nodes = nodes;
  o.heavy_tailed = true;
  o.avg_degree = 6;
  o.feat_dim = 5;
  o.seed = seed;
  Graph g = generate_graph(o);
  std::vector<int64_t> src, dst;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      src.push_back(g.indices[e]);
      dst.push_back(v);
      if (e % 7 == 0) {
        src.push_back(g.indices[e]);
        dst.push_back(v);
      }
    }
  }
  Graph multi = Graph::from_edges(g.num_nodes, src, dst);
  g.indptr = multi.indptr;
  g.indices = multi.indices;
  apply_transform(g, GraphTransform{false, true, false});
  return g;
}

void expect_same_part(const Part& a, const Part& b) {
  EXPECT_EQ(a.num_parts, b.num_parts);
  EXPECT_EQ(a.global_num_nodes, b.global_num_nodes);
  EXPECT_EQ(a.owned_gid, b.owned_gid);
  EXPECT_EQ(a.num_central, b.num_central);
  EXPECT_EQ(a.halo_gid, b.halo_gid);
  EXPECT_EQ(a.halo_offsets, b.halo_offsets);
  EXPECT_EQ(a.local_indptr, b.local_indptr);
  EXPECT_EQ(a.local_indices, b.local_indices);
  EXPECT_EQ(a.halo_indptr, b.halo_indptr);
  EXPECT_EQ(a.halo_indices, b.halo_indices);
  EXPECT_EQ(a.owned_in_degree, b.owned_in_degree);
  EXPECT_EQ(a.owned_out_degree, b.owned_out_degree);
  EXPECT_EQ(a.halo_in_degree, b.halo_in_degree);
  EXPECT_EQ(a.halo_out_degree, b.halo_out_degree);
  EXPECT_EQ(a.send_offsets, b.send_offsets);
  EXPECT_EQ(a.send_idx, b.send_idx);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.multilabels, b.multilabels);
  EXPECT_EQ(a.global_split_counts, b.global_split_counts);
  EXPECT_EQ(a.train_idx, b.train_idx);
  EXPECT_EQ(a.valid_idx, b.valid_idx);
  EXPECT_EQ(a.test_idx, b.test_idx);
}

TEST(GraphSlices, RangesCoverTheNodesInRankOrder) {
  for (int64_t n : {1, 7, 8, 1000}) {
    for (int world = 1; world <= 5 && world <= n; ++world) {
      int64_t next = 0;
      for (int r = 0; r < world; ++r) {
        const NodeRange range = slice_range(n, r, world);
        EXPECT_EQ(range.first, next);
        EXPECT_GE(range.count, n / world);
        EXPECT_LE(range.count, n / world + 1);
        for (int64_t v = range.first; v < range.first + range.count; ++v)
          ASSERT_EQ(slice_holder(n, world, v), r) << "n " << n << " world " << world;
        next += range.count;
      }
      EXPECT_EQ(next, n);
    }
  }
}

TEST(GraphSlices, FingerprintAndSymmetrisationEqualTheWholeGraphs) {
  const auto comm = test::world_comm();
  Graph g = test_graph(700, 3);
  GraphSlice s = slice_of(g, comm->rank(), comm->size());
  EXPECT_EQ(slice_fingerprint(s, *comm), fingerprint(g));
  // A directed graph (every third edge dropped), symmetrised both ways.
  Graph d = g;
  std::vector<int64_t> src, dst;
  for (int64_t v = 0; v < d.num_nodes; ++v)
    for (int64_t e = d.indptr[v]; e < d.indptr[v + 1]; ++e)
      if (e % 3 != 0) {
        src.push_back(d.indices[e]);
        dst.push_back(v);
      }
  const Graph directed = Graph::from_edges(d.num_nodes, src, dst);
  d.indptr = directed.indptr;
  d.indices = directed.indices;
  GraphSlice ds = slice_of(d, comm->rank(), comm->size());
  EXPECT_NE(slice_fingerprint(ds, *comm), fingerprint(g));
  symmetrize_slices(ds, *comm);
  apply_transform(d, GraphTransform{true, false, false});
  test::expect_same_slice(ds, slice_of(d, comm->rank(), comm->size()));
  EXPECT_EQ(slice_fingerprint(ds, *comm), fingerprint(d));
}

// One directory all ranks see (the test runs on one host), named by rank 0's pid.
std::string shared_temp_dir(Communicator& comm, const std::string& name) {
  int64_t pid = ::getpid();
  comm.broadcast(&pid, sizeof pid, 0);
  return (fs::temp_directory_path() / (name + "-" + std::to_string(pid))).string();
}

TEST(GraphSlices, NumpyRangeReaderEqualsTheWholeLoader) {
  const auto comm = test::world_comm();
  const std::string dir = shared_temp_dir(*comm, "adaqp-slices");
  Graph g = test_graph(900, 5);
  g.name = "slices";
  if (comm->rank() == 0) save_numpy(g, dir);
  comm->barrier();
  DatasetSpec spec;
  spec.path = dir;
  for (const GraphTransform t :
       {GraphTransform{false, false, false}, GraphTransform{true, true, true}}) {
    spec.transform = t;
    const GraphSlice s = load_slice(spec, *comm, agreeing_step(*comm));
    test::expect_same_slice(s, slice_of(load_dataset(spec), comm->rank(), comm->size()));
  }
  comm->barrier();
  if (comm->rank() == 0) fs::remove_all(dir);
}

// dataset.features_from_edges: every rank streams edge_index.npy and edge_feat.npy whole and sums
// its nodes' rows in file order, as the whole loader does (bit for bit, with and without
// symmetrize's both ends); feat.npy is gone, N comes from label.npy.
TEST(GraphSlices, NumpyEdgeFeatureSlicesEqualTheWholeLoader) {
  const auto comm = test::world_comm();
  const std::string dir = shared_temp_dir(*comm, "adaqp-edge-slices");
  if (comm->rank() == 0) {
    Graph g = test_graph(700, 9);
    g.name = "edge-slices";
    save_numpy(g, dir);
    const int64_t e = g.num_edges(), dim = 3;
    std::vector<float> rows(static_cast<size_t>(e * dim));
    for (size_t i = 0; i < rows.size(); ++i)
      rows[i] = static_cast<float>(static_cast<int64_t>(i * 7919 % 1013) - 500) / 7.0f;
    write_npy(dir + "/edge_feat.npy", NpyDtype::kFloat32, {e, dim}, rows.data(),
              rows.size() * sizeof(float));
    fs::remove(dir + "/feat.npy");
  }
  comm->barrier();
  DatasetSpec spec;
  spec.path = dir;
  for (const FeaturesFromEdges reduce : {FeaturesFromEdges::kMean, FeaturesFromEdges::kSum}) {
    for (const GraphTransform t :
         {GraphTransform{false, false, false}, GraphTransform{true, true, false}}) {
      SCOPED_TRACE(std::string(to_string(reduce)) + (t.symmetrize ? ", symmetrized" : ""));
      spec.features_from_edges = reduce;
      spec.transform = t;
      const GraphSlice s = load_slice(spec, *comm, agreeing_step(*comm));
      const Graph whole = load_dataset(spec);
      EXPECT_EQ(whole.feat_dim, 3);
      test::expect_same_slice(s, slice_of(whole, comm->rank(), comm->size()));
    }
  }
  comm->barrier();
  if (comm->rank() == 0) fs::remove_all(dir);
}

TEST(GraphSlices, OgbSliceReaderEqualsTheWholeLoader) {
  const auto comm = test::world_comm();
  for (const char* name : {"cora", "citeseer"}) {
    ADAQP_REQUIRE_SHARED_DATASET(dir, name);
    DatasetSpec spec;
    spec.path = dir;
    for (const GraphTransform t :
         {GraphTransform{false, false, false}, GraphTransform{true, true, true}}) {
      SCOPED_TRACE(name);
      spec.transform = t;
      const GraphSlice s = load_slice(spec, *comm, agreeing_step(*comm));
      test::expect_same_slice(s, slice_of(load_dataset(spec), comm->rank(), comm->size()));
    }
  }
}

TEST(DistributedParts, EqualBuildPartForTheSameOwners) {
  const auto comm = test::world_comm();
  const int world = comm->size();
  const Graph g = test_graph(800, 11);
  for (const PartitionMethod m : {PartitionMethod::kMetis, PartitionMethod::kRandom}) {
    PartitionOptions opt;
    opt.method = m;
    opt.parts = world;
    const std::vector<int32_t> owner = assign_parts(g, opt);
    const GraphSlice s = slice_of(g, comm->rank(), world);
    const std::vector<int32_t> mine(owner.begin() + s.first, owner.begin() + s.first + s.count());
    const SlicedPart got = build_part_from_slices(s, mine, *comm);
    SCOPED_TRACE(to_string(m));
    expect_same_part(got.part, build_part(g, owner, comm->rank()));
    EXPECT_EQ(got.edge_cut, edge_cut(g, owner));
  }
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The same assignment through both paths gives the same partition files, byte for byte.
TEST(DistributedParts, WriteTheFilesTheSerialPathWrites) {
  const auto comm = test::world_comm();
  const int world = comm->size();
  const fs::path root = shared_temp_dir(*comm, "adaqp-dparts");
  const Graph g = test_graph(600, 17);
  PartitionOptions opt;
  opt.parts = world;
  opt.seed = 3;
  if (comm->rank() == 0) write_partition((root / "serial").string(), g, opt);
  const std::vector<int32_t> owner = assign_parts(g, opt);
  const GraphSlice s = slice_of(g, comm->rank(), world);
  const std::vector<int32_t> mine(owner.begin() + s.first, owner.begin() + s.first + s.count());
  const DistributedPartition made = build_distributed_partition(s, mine, opt, *comm);
  write_distributed_partition((root / "sliced").string(), made.part, made.meta, *comm,
                              agreeing_step(*comm));
  comm->barrier();
  EXPECT_EQ(file_bytes(partition_meta_path((root / "sliced").string())),
            file_bytes(partition_meta_path((root / "serial").string())));
  EXPECT_EQ(file_bytes(partition_part_path((root / "sliced").string(), comm->rank())),
            file_bytes(partition_part_path((root / "serial").string(), comm->rank())));
  comm->barrier();
  if (comm->rank() == 0) fs::remove_all(root);
}

// Every rank's rows of the graph PT-Scotch sees, gathered: (node, neighbour) pairs, sorted.
std::vector<std::pair<int64_t, int64_t>> gathered_arcs(const GraphSlice& s, Communicator& comm,
                                                       const PartitionOptions& opt) {
  const SliceRows rows = ptscotch_graph(s, comm, opt);
  EXPECT_EQ(static_cast<int64_t>(rows.indptr.size()), s.count() + 1);
  std::vector<int64_t> mine;
  for (int64_t i = 0; i < s.count(); ++i)
    for (int64_t e = rows.indptr[i]; e < rows.indptr[i + 1]; ++e)
      mine.insert(mine.end(), {s.first + i, rows.indices[e]});
  const std::vector<int64_t> all =
      all_to_all(comm, std::vector<std::vector<int64_t>>(comm.size(), mine), 7).data;
  std::vector<std::pair<int64_t, int64_t>> arcs;
  for (size_t k = 0; k + 1 < all.size(); k += 2) arcs.emplace_back(all[k], all[k + 1]);
  return arcs;  // rank order: ascending node, each row ascending
}

TEST(DistributedParts, PtscotchSamplesASymmetricSubgraphKeepingLowDegreeRows) {
  const auto comm = test::world_comm();
  const Graph g = test_graph(2000, 13);
  const GraphSlice s = slice_of(g, comm->rank(), comm->size());
  // The symmetrised graph without self-loops, from the whole graph.
  std::vector<std::pair<int64_t, int64_t>> whole;
  for (int64_t v = 0; v < g.num_nodes; ++v)
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
      if (g.indices[e] != v) {
        whole.emplace_back(v, g.indices[e]);
        whole.emplace_back(g.indices[e], v);
      }
  std::sort(whole.begin(), whole.end());
  whole.erase(std::unique(whole.begin(), whole.end()), whole.end());
  std::vector<int64_t> degree(static_cast<size_t>(g.num_nodes), 0);
  for (const auto& a : whole) ++degree[a.first];
  PartitionOptions opt;
  opt.method = PartitionMethod::kPtscotch;
  opt.parts = comm->size();
  opt.seed = 5;
  EXPECT_EQ(gathered_arcs(s, *comm, opt), whole);
  opt.sample_degree = *std::max_element(degree.begin(), degree.end());
  EXPECT_EQ(gathered_arcs(s, *comm, opt), whole);

  opt.sample_degree = 3;
  const auto sample = gathered_arcs(s, *comm, opt);
  // METIS's sample of the whole graph in one process is the same graph.
  std::vector<int64_t> indptr(static_cast<size_t>(g.num_nodes) + 1, 0), indices;
  for (const auto& [v, u] : whole) {
    ++indptr[v + 1];
    indices.push_back(u);
  }
  for (int64_t v = 0; v < g.num_nodes; ++v) indptr[v + 1] += indptr[v];
  sample_symmetric_rows(indptr, indices, opt.sample_degree, opt.seed);
  std::vector<std::pair<int64_t, int64_t>> single;
  for (int64_t v = 0; v < g.num_nodes; ++v)
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) single.emplace_back(v, indices[e]);
  EXPECT_EQ(single, sample) << "METIS's sample differs from PT-Scotch's";
  EXPECT_TRUE(std::includes(whole.begin(), whole.end(), sample.begin(), sample.end()));
  std::vector<int64_t> kept(static_cast<size_t>(g.num_nodes), 0);
  for (const auto& [v, u] : sample) {
    ++kept[v];
    EXPECT_TRUE(std::binary_search(sample.begin(), sample.end(), std::make_pair(u, v)))
        << "the sample holds " << v << " -> " << u << " but not its reverse";
  }
  for (int64_t v = 0; v < g.num_nodes; ++v)
    ASSERT_GE(kept[v], std::min<int64_t>(3, degree[v])) << "node " << v;
  // At most each node's 3 plus the edges others keep: well under the whole graph here.
  EXPECT_LE(sample.size(), 6 * static_cast<size_t>(g.num_nodes));
  EXPECT_LT(sample.size(), whole.size() * 3 / 4);
  EXPECT_EQ(gathered_arcs(s, *comm, opt), sample);
  const auto self = make_mpi_communicator(MPI_COMM_SELF, 60.0);
  opt.parts = 1;
  EXPECT_EQ(gathered_arcs(slice_of(g, 0, 1), *self, opt), sample) << "differs from one rank's";
  opt.parts = comm->size();
  opt.seed = 6;
  EXPECT_NE(gathered_arcs(s, *comm, opt), sample);
}

TEST(DistributedParts, PtscotchOwnsEveryNodeDeterministically) {
  const auto comm = test::world_comm();
  const int world = comm->size();
  const Graph g = test_graph(2000, 13);
  const GraphSlice s = slice_of(g, comm->rank(), world);
  PartitionOptions opt;
  opt.method = PartitionMethod::kPtscotch;
  opt.parts = world;
  for (const int64_t sample_degree : {0, 3}) {
    SCOPED_TRACE("sample_degree " + std::to_string(sample_degree));
    opt.sample_degree = sample_degree;
    const std::vector<int32_t> a = ptscotch_owners(s, MPI_COMM_WORLD, *comm, opt);
    const std::vector<int32_t> b = ptscotch_owners(s, MPI_COMM_WORLD, *comm, opt);
    ASSERT_EQ(static_cast<int64_t>(a.size()), s.count());
    EXPECT_EQ(a, b);
    std::vector<int64_t> sizes(static_cast<size_t>(world), 0);
    for (int32_t r : a) {
      ASSERT_GE(r, 0);
      ASSERT_LT(r, world);
      ++sizes[r];
    }
    comm->allreduce_sum(sizes.data(), sizes.size());
    for (int r = 0; r < world; ++r) {
      EXPECT_GT(sizes[r], 0);
      EXPECT_LE(sizes[r], g.num_nodes / world * 1.05 + 1) << "part " << r;  // 3% imbalance
    }
    // Better than chance: a random assignment cuts about (1 - 1/W) of the edges.
    const SlicedPart p = build_part_from_slices(s, a, *comm);
    if (world > 1) {
      EXPECT_LT(p.edge_cut, 0.5 * (1.0 - 1.0 / world) * g.num_edges());
    }
  }
  opt.sample_degree = 0;
  opt.balance_train = true;
  EXPECT_EQ(test::error_of<ConfigError>([&] { require_ptscotch_options(s, world, opt); }),
            "partition.balance_train, balance_edges and balance_types are METIS constraints; "
            "partition.method ptscotch balances node counts only");
}

}  // namespace
}  // namespace adaqp
