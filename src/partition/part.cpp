#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/partition/part.h"
#include "part_features.h"

namespace adaqp {
namespace {

// Rows of a CSR whose column lists end up sorted, built row by row; with `typed`, each entry's
// relation travels with it (rows sorted by column, then relation).
struct CsrBuilder {
  bool typed = false;
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices, relations;

  void add(int32_t column, int32_t relation) {
    indices.push_back(column);
    if (typed) relations.push_back(relation);
  }
  void finish_row() {
    const auto begin = static_cast<size_t>(indptr.back());
    if (typed) {
      std::vector<std::pair<int32_t, int32_t>> row;
      for (size_t e = begin; e < indices.size(); ++e) row.emplace_back(indices[e], relations[e]);
      std::sort(row.begin(), row.end());
      for (size_t k = 0; k < row.size(); ++k) {
        indices[begin + k] = row[k].first;
        relations[begin + k] = row[k].second;
      }
    } else {
      std::sort(indices.begin() + static_cast<std::ptrdiff_t>(begin), indices.end());
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
};

// Local owned indices of the nodes in `gids` that `rank` owns, ascending.
std::vector<int64_t> owned_locals(const std::vector<int64_t>& gids,
                                  const std::vector<int32_t>& owner, int rank,
                                  const std::vector<int64_t>& index_of) {
  std::vector<int64_t> out;
  for (int64_t v : gids)
    if (owner[v] == rank) out.push_back(index_of[v]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Part build_part(const Graph& g, const std::vector<int32_t>& owner, int rank) {
  const int64_t n = g.num_nodes;
  ADAQP_CHECK(static_cast<int64_t>(owner.size()) == n, "owner has one entry per node");
  ADAQP_CHECK(n > 0, "graph has nodes");
  const int32_t max_owner = *std::max_element(owner.begin(), owner.end());
  ADAQP_CHECK(*std::min_element(owner.begin(), owner.end()) >= 0, "owners are >= 0");
  ADAQP_CHECK(rank >= 0 && rank <= max_owner, "rank is an owner id");

  Part p;
  p.rank = rank;
  p.num_parts = max_owner + 1;
  p.global_num_nodes = n;

  // Owned nodes: central (no remote in-neighbour) first, then marginal, each in ascending id.
  std::vector<int64_t> marginal;
  for (int64_t v = 0; v < n; ++v) {
    if (owner[v] != rank) continue;
    bool remote = false;
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1] && !remote; ++e)
      remote = owner[g.indices[e]] != rank;
    (remote ? marginal : p.owned_gid).push_back(v);
  }
  p.num_central = p.num_owned();
  ADAQP_CHECK(p.num_central + static_cast<int64_t>(marginal.size()) <= INT32_MAX,
              "owned local indices fit int32");
  p.owned_gid.insert(p.owned_gid.end(), marginal.begin(), marginal.end());

  // index_of[v]: owned local index for owned v, halo index for halo v, -1 otherwise.
  std::vector<int64_t> index_of(n, -1);
  for (int64_t i = 0; i < p.num_owned(); ++i) index_of[p.owned_gid[i]] = i;
  for (int64_t v : marginal) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      if (owner[u] != rank && index_of[u] == -1) {
        index_of[u] = 0;
        p.halo_gid.push_back(u);
      }
    }
  }
  std::sort(p.halo_gid.begin(), p.halo_gid.end(), [&](int64_t a, int64_t b) {
    return owner[a] != owner[b] ? owner[a] < owner[b] : a < b;
  });
  ADAQP_CHECK(p.num_halo() <= INT32_MAX, "halo indices fit int32");
  p.halo_offsets.assign(p.num_parts + 1, 0);
  for (int64_t h = 0; h < p.num_halo(); ++h) {
    index_of[p.halo_gid[h]] = h;
    ++p.halo_offsets[owner[p.halo_gid[h]] + 1];
  }
  for (int r = 0; r < p.num_parts; ++r) p.halo_offsets[r + 1] += p.halo_offsets[r];

  const bool typed = g.heterogeneous();
  CsrBuilder local, halo;
  local.typed = halo.typed = typed;
  for (int64_t v : p.owned_gid) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      (owner[u] == rank ? local : halo)
          .add(static_cast<int32_t>(index_of[u]), typed ? g.edge_relation[e] : 0);
    }
    local.finish_row();
    halo.finish_row();
  }
  p.local_indptr = std::move(local.indptr);
  p.local_indices = std::move(local.indices);
  p.local_relations = std::move(local.relations);
  p.halo_indptr = std::move(halo.indptr);
  p.halo_indices = std::move(halo.indices);
  p.halo_relations = std::move(halo.relations);
  if (typed) {
    p.num_node_types = static_cast<int32_t>(g.node_types.size());
    p.num_relations = static_cast<int32_t>(g.relations.size());
    for (int64_t v : p.owned_gid) p.owned_type.push_back(g.node_type(v));
    for (int64_t u : p.halo_gid) p.halo_type.push_back(g.node_type(u));
  }

  const std::vector<int64_t> out_degree = g.out_degrees();
  for (int64_t v : p.owned_gid) {
    p.owned_in_degree.push_back(g.in_degree(v));
    p.owned_out_degree.push_back(out_degree[v]);
  }
  for (int64_t u : p.halo_gid) {
    p.halo_in_degree.push_back(g.in_degree(u));
    p.halo_out_degree.push_back(out_degree[u]);
  }

  // Send lists: (peer, node) for every edge from an owned node into a node of another part;
  // sorted, so each peer's list is in ascending id, the order of that peer's halo block.
  std::vector<std::pair<int32_t, int64_t>> sends;
  for (int64_t d = 0; d < n; ++d) {
    if (owner[d] == rank) continue;
    for (int64_t e = g.indptr[d]; e < g.indptr[d + 1]; ++e)
      if (owner[g.indices[e]] == rank) sends.emplace_back(owner[d], g.indices[e]);
  }
  std::sort(sends.begin(), sends.end());
  sends.erase(std::unique(sends.begin(), sends.end()), sends.end());
  p.send_offsets.assign(p.num_parts + 1, 0);
  for (const auto& [q, u] : sends) {
    ++p.send_offsets[q + 1];
    p.send_idx.push_back(index_of[u]);
  }
  for (int r = 0; r < p.num_parts; ++r) p.send_offsets[r + 1] += p.send_offsets[r];

  p.feat_dim = g.feat_dim;
  // Mostly-zero rows go straight into CSR, as the part file holds them: `adaqp partition` of
  // Coauthor Physics at W=1 then holds its 1.16 GB of features once, not twice.
  p.feature_csr = smaller_as_csr(g.features.data(), p.owned_gid.data(), p.num_owned(), g.feat_dim);
  if (!p.feature_csr) {
    p.features.resize(p.num_owned() * g.feat_dim);
    for (int64_t i = 0; i < p.num_owned(); ++i)
      std::memcpy(&p.features[i * g.feat_dim], &g.features[p.owned_gid[i] * g.feat_dim],
                  sizeof(float) * g.feat_dim);
  }
  p.num_classes = g.num_classes;
  p.multilabel = g.multilabel;
  if (g.multilabel) {
    p.multilabels.resize(p.num_owned() * g.num_classes);
    for (int64_t i = 0; i < p.num_owned(); ++i)
      std::memcpy(&p.multilabels[i * g.num_classes], &g.multilabels[p.owned_gid[i] * g.num_classes],
                  g.num_classes);
  } else {
    for (int64_t v : p.owned_gid) p.labels.push_back(g.labels[v]);
  }
  p.global_split_counts = {static_cast<int64_t>(g.train.size()),
                           static_cast<int64_t>(g.valid.size()),
                           static_cast<int64_t>(g.test.size())};
  p.train_idx = owned_locals(g.train, owner, rank, index_of);
  p.valid_idx = owned_locals(g.valid, owner, rank, index_of);
  p.test_idx = owned_locals(g.test, owner, rank, index_of);
  return p;
}

void densify_features(Part& p) {
  if (!p.feature_csr) return;
  const FeatureCsr& csr = *p.feature_csr;
  p.features.assign(static_cast<size_t>(p.num_owned() * p.feat_dim), 0.0f);
  for (int64_t i = 0; i < p.num_owned(); ++i) {
    for (int64_t e = csr.indptr[i]; e < csr.indptr[i + 1]; ++e)
      p.features[static_cast<size_t>(i * p.feat_dim + csr.columns[e])] = csr.values[e];
  }
  p.feature_csr.reset();
}

}  // namespace adaqp
