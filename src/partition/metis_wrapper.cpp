#include "metis_wrapper.h"

#include <fmt/format.h>
#include <metis.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "adaqp/common/error.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/edge_sample.h"

namespace adaqp {
namespace {

constexpr int64_t kIdxMax = std::numeric_limits<idx_t>::max();

const char* metis_code_name(int code) {
  switch (code) {
    case METIS_ERROR_INPUT:
      return "METIS_ERROR_INPUT (invalid input)";
    case METIS_ERROR_MEMORY:
      return "METIS_ERROR_MEMORY (out of memory)";
    case METIS_ERROR:
      // GKlib traps SIGTERM and SIGABRT while METIS runs and returns this code for them.
      return "METIS_ERROR (an internal error, or the process was sent SIGTERM or SIGABRT while "
             "METIS ran)";
    default:
      return "unknown METIS return code";
  }
}

[[noreturn]] void too_large(const Graph& g, const std::string& what) {
  throw InputError(g.name, "METIS",
                   fmt::format("{} exceeds METIS's {}-bit idx_t (max {}); use partition.method "
                               "random or contiguous, or a METIS built with IDXTYPEWIDTH 64",
                               what, IDXTYPEWIDTH, kIdxMax));
}

// Undirected adjacency: the union of in- and out-neighbours of each node, sorted, without self.
void symmetric_adjacency(const Graph& g, std::vector<idx_t>& xadj, std::vector<idx_t>& adjncy) {
  const int64_t n = g.num_nodes;
  std::vector<int64_t> start(n + 1, 0);
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      if (u == v) continue;
      ++start[v + 1];
      ++start[u + 1];
    }
  }
  for (int64_t v = 0; v < n; ++v) start[v + 1] += start[v];
  std::vector<int64_t> cursor(start.begin(), start.end() - 1);
  adjncy.resize(start[n]);
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      if (u == v) continue;
      adjncy[cursor[v]++] = static_cast<idx_t>(u);
      adjncy[cursor[u]++] = static_cast<idx_t>(v);
    }
  }
  int64_t out = 0;
  xadj.assign(n + 1, 0);
  for (int64_t v = 0; v < n; ++v) {
    auto first = adjncy.begin() + start[v], last = adjncy.begin() + start[v + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    out = std::copy(first, last, adjncy.begin() + out) - adjncy.begin();
    if (out > kIdxMax) too_large(g, fmt::format("the symmetrised graph's adjacency (>= {})", out));
    xadj[v + 1] = static_cast<idx_t>(out);
  }
  adjncy.resize(out);
  adjncy.shrink_to_fit();
}

// The graph METIS partitions: the symmetric adjacency, or its sample (partition/edge_sample.h).
void metis_graph(const Graph& g, int64_t sample_degree, uint64_t seed, std::vector<idx_t>& xadj,
                 std::vector<idx_t>& adjncy) {
  symmetric_adjacency(g, xadj, adjncy);
  if (sample_degree == 0) return;
  const auto whole = static_cast<int64_t>(adjncy.size());
  sample_symmetric_rows(xadj, adjncy, sample_degree, seed);
  spdlog::info("partition: a sample of {} of the {} symmetric edges (sample_degree {})",
               adjncy.size() / 2, whole / 2, sample_degree);
}

}  // namespace

std::vector<int32_t> metis_part_kway(const Graph& g, int ncon, const std::vector<int64_t>& vwgt,
                                     int parts, uint64_t seed, int64_t sample_degree) {
  ADAQP_CHECK(parts >= 1 && ncon >= 1, "parts >= 1 and ncon >= 1");
  ADAQP_CHECK(static_cast<int64_t>(vwgt.size()) == g.num_nodes * ncon, "vwgt size");
  if (parts == 1) return std::vector<int32_t>(g.num_nodes, 0);
  if (g.num_nodes > kIdxMax) too_large(g, fmt::format("{} nodes", g.num_nodes));
  for (int c = 0; c < ncon; ++c) {
    int64_t total = 0;
    for (int64_t v = 0; v < g.num_nodes; ++v) total += vwgt[v * ncon + c];
    if (total > kIdxMax) too_large(g, fmt::format("the sum {} of vertex weights {}", total, c));
  }

  std::vector<idx_t> xadj, adjncy;
  metis_graph(g, sample_degree, seed, xadj, adjncy);
  std::vector<idx_t> weights(vwgt.begin(), vwgt.end());
  idx_t nvtxs = static_cast<idx_t>(g.num_nodes), nc = ncon, nparts = parts, objval = 0;
  std::vector<idx_t> part(g.num_nodes);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = static_cast<idx_t>(library_seed(seed, kIdxMax));
  const int rc =
      METIS_PartGraphKway(&nvtxs, &nc, xadj.data(), adjncy.data(), weights.data(), nullptr, nullptr,
                          &nparts, nullptr, nullptr, options, &objval, part.data());
  if (rc != METIS_OK)
    throw Error(
        fmt::format("{}: METIS_PartGraphKway into {} parts ({} nodes, {} constraints) "
                    "failed: {}",
                    g.name, parts, g.num_nodes, ncon, metis_code_name(rc)));
  return {part.begin(), part.end()};
}

}  // namespace adaqp
