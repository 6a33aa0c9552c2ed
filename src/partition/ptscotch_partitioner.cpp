#include "adaqp/partition/ptscotch_partitioner.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "adaqp/comm/all_to_all.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/edge_sample.h"

// ptscotch.h needs stdio.h, stdint.h and mpi.h first.
#include <ptscotch.h>

namespace adaqp {
namespace {

static_assert(sizeof(SCOTCH_Num) == sizeof(int64_t), "the 64-bit PT-Scotch (scotch-int64)");

constexpr int kScotchTag = 32757;

void check_scotch(int code, const char* call) {
  if (code != 0)
    throw Error(fmt::format("PT-Scotch {} failed (code {}; its message is on stderr)", call, code));
}

// RAII for PT-Scotch's distributed graph and strategy.
class ScotchGraph {
 public:
  explicit ScotchGraph(MPI_Comm mpi) { check_scotch(SCOTCH_dgraphInit(&g_, mpi), "dgraphInit"); }
  ~ScotchGraph() { SCOTCH_dgraphExit(&g_); }
  ScotchGraph(const ScotchGraph&) = delete;
  ScotchGraph& operator=(const ScotchGraph&) = delete;
  SCOTCH_Dgraph* get() { return &g_; }

 private:
  SCOTCH_Dgraph g_;
};

// A context whose random generator is seeded for this call and whose algorithms avoid the
// nondeterminism of racing threads (SCOTCH_OPTIONNUMDETERMINISTIC), with `graph` bound to it.
class ScotchContext {
 public:
  ScotchContext(SCOTCH_Dgraph* graph, SCOTCH_Num seed) {
    check_scotch(SCOTCH_contextInit(&c_), "contextInit");
    check_scotch(SCOTCH_contextOptionSetNum(&c_, SCOTCH_OPTIONNUMDETERMINISTIC, 1),
                 "contextOptionSetNum");
    check_scotch(SCOTCH_contextRandomClone(&c_), "contextRandomClone");
    SCOTCH_contextRandomSeed(&c_, seed);
    check_scotch(SCOTCH_contextBindDgraph(&c_, graph, &bound_), "contextBindDgraph");
  }
  ~ScotchContext() {
    SCOTCH_dgraphExit(&bound_);
    SCOTCH_contextExit(&c_);
  }
  ScotchContext(const ScotchContext&) = delete;
  ScotchContext& operator=(const ScotchContext&) = delete;
  SCOTCH_Dgraph* graph() { return &bound_; }

 private:
  SCOTCH_Context c_;
  SCOTCH_Dgraph bound_;
};

class ScotchStrategy {
 public:
  ScotchStrategy() { check_scotch(SCOTCH_stratInit(&s_), "stratInit"); }
  ~ScotchStrategy() { SCOTCH_stratExit(&s_); }
  ScotchStrategy(const ScotchStrategy&) = delete;
  ScotchStrategy& operator=(const ScotchStrategy&) = delete;
  SCOTCH_Strat* get() { return &s_; }

 private:
  SCOTCH_Strat s_;
};

// Rows of this slice from (local row, neighbour) entries: own in-edges (self-loops dropped) and
// `in`'s pairs (global row, neighbour); each row sorted without repeats. A counting sort by row,
// so the rows take 8 bytes per entry beside `in`.
void rows_from_pairs(const GraphSlice& s, const std::vector<int64_t>& in, bool own_edges,
                     std::vector<int64_t>& indptr, std::vector<int64_t>& indices) {
  const int64_t n = s.count();
  indptr.assign(static_cast<size_t>(n) + 1, 0);
  if (own_edges)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e)
        indptr[i + 1] += s.indices[e] != s.first + i;
  for (size_t k = 0; k + 1 < in.size(); k += 2) ++indptr[in[k] - s.first + 1];
  for (int64_t i = 0; i < n; ++i) indptr[i + 1] += indptr[i];
  std::vector<int64_t> next(indptr.begin(), indptr.end() - 1);
  indices.assign(static_cast<size_t>(indptr[n]), 0);
  if (own_edges)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e)
        if (s.indices[e] != s.first + i) indices[next[i]++] = s.indices[e];
  for (size_t k = 0; k + 1 < in.size(); k += 2) indices[next[in[k] - s.first]++] = in[k + 1];
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto begin = indices.begin() + indptr[i], end = indices.begin() + indptr[i + 1];
    std::sort(begin, end);
    const auto last = std::unique(begin, end);
    indptr[i] = kept;
    kept = std::copy(begin, last, indices.begin() + kept) - indices.begin();
  }
  indptr[n] = kept;
  indices.resize(static_cast<size_t>(kept));
  indices.shrink_to_fit();
}

// This slice's rows of the symmetrised graph without self-loops (global ids, sorted, unique):
// each edge u -> v adds u to v's row here and v to u's row at u's slice.
void symmetric_rows(const GraphSlice& s, Communicator& comm, std::vector<int64_t>& indptr,
                    std::vector<int64_t>& indices) {
  const int world = comm.size();
  std::vector<std::vector<int64_t>> out(world);
  for (int64_t i = 0; i < s.count(); ++i) {
    const int64_t v = s.first + i;
    for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) {
      const int64_t u = s.indices[e];
      if (u == v) continue;
      auto& to = out[slice_holder(s.num_nodes, world, u)];
      to.push_back(u);
      to.push_back(v);
    }
  }
  std::vector<int64_t> in = all_to_all(comm, out, kScotchTag).data;
  out = {};
  rows_from_pairs(s, in, true, indptr, indices);
}

// Replaces this slice's symmetric rows by their rows of the sample (partition/edge_sample.h): the
// reverse of every kept edge goes to the slice holding its other end.
void sparsify_rows(const GraphSlice& s, Communicator& comm, int64_t degree, uint64_t seed,
                   std::vector<int64_t>& indptr, std::vector<int64_t>& indices) {
  const int world = comm.size();
  std::vector<std::vector<int64_t>> out(world);
  RowSampler sampler(degree, seed);
  for (int64_t i = 0; i < s.count(); ++i) {
    const int64_t v = s.first + i;
    for (const int64_t u :
         sampler.keep(v, indices.data() + indptr[i], indices.data() + indptr[i + 1])) {
      // Kept at both ends: v's row here (sent to itself) and the neighbour's at its slice.
      out[comm.rank()].insert(out[comm.rank()].end(), {v, u});
      auto& to = out[slice_holder(s.num_nodes, world, u)];
      to.push_back(u);
      to.push_back(v);
    }
  }
  std::vector<int64_t>().swap(indices);
  std::vector<int64_t> in = all_to_all(comm, out, kScotchTag).data;
  out = {};
  rows_from_pairs(s, in, false, indptr, indices);
}

}  // namespace

SliceRows ptscotch_graph(const GraphSlice& s, Communicator& comm, const PartitionOptions& opt) {
  SliceRows g;
  symmetric_rows(s, comm, g.indptr, g.indices);
  if (opt.sample_degree == 0) return g;
  int64_t arcs[2] = {static_cast<int64_t>(g.indices.size()), 0};  // whole, sample
  sparsify_rows(s, comm, opt.sample_degree, opt.seed, g.indptr, g.indices);
  arcs[1] = static_cast<int64_t>(g.indices.size());
  comm.allreduce_sum(arcs, 2);
  if (comm.rank() == 0)
    spdlog::info("partition: a sample of {} of the {} symmetric edges (sample_degree {})",
                 arcs[1] / 2, arcs[0] / 2, opt.sample_degree);
  return g;
}

void require_ptscotch_options(const GraphSlice& s, int world, const PartitionOptions& opt) {
  if (opt.balance_train || opt.balance_edges || opt.balance_types)
    throw ConfigError(
        "partition.balance_train, balance_edges and balance_types are METIS constraints; "
        "partition.method ptscotch balances node counts only");
  if (opt.parts != world)
    throw ConfigError(
        fmt::format("partition.parts is {} but the job runs {} ranks: ptscotch makes "
                    "one part per rank",
                    opt.parts, world));
  if (opt.parts > s.num_nodes)
    throw ConfigError(fmt::format("partition.parts = {}: more parts than the {} nodes of '{}'",
                                  opt.parts, s.num_nodes, s.name));
}

std::vector<int32_t> ptscotch_owners(const GraphSlice& s, MPI_Comm mpi, Communicator& comm,
                                     const PartitionOptions& opt) {
  const double t0 = steady_now_s();
  std::vector<int32_t> owner(static_cast<size_t>(s.count()));
  if (opt.parts == 1) return owner;
  SliceRows rows_of = ptscotch_graph(s, comm, opt);
  ScotchGraph graph(mpi);
  const SCOTCH_Num rows = s.count(), edges = static_cast<SCOTCH_Num>(rows_of.indices.size());
  check_scotch(
      SCOTCH_dgraphBuild(graph.get(), 0, rows, rows, rows_of.indptr.data(), nullptr, nullptr,
                         nullptr, edges, edges, rows_of.indices.data(), nullptr, nullptr),
      "dgraphBuild");
  ScotchStrategy strategy;
  check_scotch(
      SCOTCH_stratDgraphMapBuild(strategy.get(), SCOTCH_STRATDEFAULT, opt.parts, opt.parts, 0.03),
      "stratDgraphMapBuild");
  ScotchContext context(
      graph.get(), static_cast<SCOTCH_Num>(library_seed(
                       opt.seed, static_cast<uint64_t>(std::numeric_limits<SCOTCH_Num>::max()))));
  std::vector<SCOTCH_Num> parts(static_cast<size_t>(rows));
  check_scotch(SCOTCH_dgraphPart(context.graph(), opt.parts, strategy.get(), parts.data()),
               "dgraphPart");
  for (size_t i = 0; i < parts.size(); ++i) {
    ADAQP_CHECK(parts[i] >= 0 && parts[i] < opt.parts, "PT-Scotch part in range");
    owner[i] = static_cast<int32_t>(parts[i]);
  }
  if (comm.rank() == 0) {
    spdlog::info("partition: ptscotch into {} parts on {} ranks in {:.3f} s", opt.parts,
                 comm.size(), steady_now_s() - t0);
  }
  return owner;
}

void require_every_part_owned(const GraphSlice& s, const std::vector<int32_t>& owner, int parts,
                              Communicator& comm) {
  std::vector<int64_t> sizes(static_cast<size_t>(parts), 0);
  for (const int32_t r : owner) ++sizes[static_cast<size_t>(r)];
  comm.allreduce_sum(sizes.data(), sizes.size());
  for (int r = 0; r < parts; ++r)
    if (sizes[r] == 0)
      throw InputError(
          s.name, "partition",
          fmt::format("method ptscotch left part {} of {} empty; use fewer parts", r, parts));
  if (comm.rank() == 0) {
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    spdlog::info("partition: part sizes {}..{} nodes", *lo, *hi);
  }
}

}  // namespace adaqp
