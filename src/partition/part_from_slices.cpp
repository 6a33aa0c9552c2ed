#include "adaqp/partition/part_from_slices.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>

#include "adaqp/comm/all_to_all.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

constexpr int kPartsTag = 32756;

// Adds a container's size (std::accumulate over a list of vectors).
constexpr auto sum_sizes = [](size_t total, const auto& v) { return total + v.size(); };

// The out-degree of every node of this slice and the distinct sources of its edges (sorted): each
// rank counts the sources of its edges and sends the counts to the sources' holders.
void slice_sources(const GraphSlice& s, Communicator& comm, std::vector<int64_t>& out_degree,
                   std::vector<int64_t>& sources) {
  const int world = comm.size();
  sources = s.indices;
  std::sort(sources.begin(), sources.end());
  std::vector<std::vector<int64_t>> out(world);
  size_t distinct = 0;
  for (size_t i = 0; i < sources.size();) {
    size_t j = i;
    while (j < sources.size() && sources[j] == sources[i]) ++j;
    auto& to = out[slice_holder(s.num_nodes, world, sources[i])];
    to.push_back(sources[i]);
    to.push_back(static_cast<int64_t>(j - i));
    sources[distinct++] = sources[i];
    i = j;
  }
  sources.resize(distinct);
  sources.shrink_to_fit();
  out_degree.assign(static_cast<size_t>(s.count()), 0);
  const std::vector<int64_t> in = all_to_all(comm, out, kPartsTag).data;
  for (size_t k = 0; k + 1 < in.size(); k += 2) out_degree[in[k] - s.first] += in[k + 1];
}

// answer(i) for the node of every id (ascending) at the slice holding it, i its index there: one
// round trip. Collective. Holders' ranges ascend with rank and each one answers in the order
// asked, so the answers concatenated in rank order follow ids.
template <typename T, typename Answer>
std::vector<T> ask_holders(const GraphSlice& s, const std::vector<int64_t>& ids, Communicator& comm,
                           const Answer& answer) {
  const int world = comm.size();
  std::vector<std::vector<int64_t>> ask(world);
  for (int64_t u : ids) ask[slice_holder(s.num_nodes, world, u)].push_back(u);
  const Received<int64_t> asked = all_to_all(comm, ask, kPartsTag);
  std::vector<std::vector<T>> replies(world);
  for (int r = 0; r < world; ++r)
    for (size_t k = asked.offsets[r]; k < asked.offsets[r + 1]; ++k)
      replies[r].push_back(answer(asked.data[k] - s.first));
  std::vector<T> out = all_to_all(comm, replies, kPartsTag).data;
  ADAQP_CHECK(out.size() == ids.size(), "one answer per id");
  return out;
}

// What a part's owner receives about one of its nodes.
enum NodeField { kGid, kOutDegree, kSplit, kLabel, kRowLength, kNodeFields };
// ... and about one in-edge of it.
enum EdgeField { kSource, kSourceOwner, kEdgeFields };

int64_t position(const std::vector<int64_t>& sorted, int64_t v) {
  return std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
}

}  // namespace

SlicedPart build_part_from_slices(const GraphSlice& s, const std::vector<int32_t>& slice_owner,
                                  Communicator& comm) {
  const int world = comm.size(), rank = comm.rank();
  ADAQP_CHECK(static_cast<int64_t>(slice_owner.size()) == s.count(), "one owner per slice node");
  std::vector<int64_t> out_degree, src_ids;
  slice_sources(s, comm, out_degree, src_ids);
  std::vector<int32_t> src_owner =
      ask_holders<int32_t>(s, src_ids, comm, [&](int64_t i) { return slice_owner[i]; });

  // Every slice node, its in-edges and its data to its owner.
  std::vector<std::vector<int64_t>> nodes(world), edges(world);
  std::vector<std::vector<float>> features(world);
  std::vector<std::vector<uint8_t>> multilabels(world);
  SlicedPart result;
  const auto split_of = [&](const std::vector<int64_t>& ids, int64_t v) {
    return std::binary_search(ids.begin(), ids.end(), v);
  };
  for (int64_t i = 0; i < s.count(); ++i) {
    const int64_t v = s.first + i;
    const int q = slice_owner[i];
    const int64_t split = split_of(s.train, v)   ? 1
                          : split_of(s.valid, v) ? 2
                          : split_of(s.test, v)  ? 3
                                                 : 0;
    const int64_t row = s.indptr[i + 1] - s.indptr[i];
    nodes[q].insert(nodes[q].end(), {v, out_degree[i], split, s.multilabel ? 0 : s.labels[i], row});
    for (int64_t e = s.indptr[i]; e < s.indptr[i + 1]; ++e) {
      const int32_t source_owner = src_owner[position(src_ids, s.indices[e])];
      edges[q].insert(edges[q].end(), {s.indices[e], source_owner});
      result.edge_cut += source_owner != q;
    }
    features[q].insert(features[q].end(), s.features.begin() + i * s.feat_dim,
                       s.features.begin() + (i + 1) * s.feat_dim);
    if (s.multilabel)
      multilabels[q].insert(multilabels[q].end(), s.multilabels.begin() + i * s.num_classes,
                            s.multilabels.begin() + (i + 1) * s.num_classes);
  }
  std::vector<int64_t>().swap(src_ids);
  std::vector<int32_t>().swap(src_owner);
  // Redistributed bytes, all ranks together (logged by the caller).
  result.bytes_moved = static_cast<int64_t>(
      sizeof(int64_t) * (std::accumulate(nodes.begin(), nodes.end(), size_t{0}, sum_sizes) +
                         std::accumulate(edges.begin(), edges.end(), size_t{0}, sum_sizes)) +
      sizeof(float) * std::accumulate(features.begin(), features.end(), size_t{0}, sum_sizes) +
      std::accumulate(multilabels.begin(), multilabels.end(), size_t{0}, sum_sizes));
  int64_t reduced[2] = {result.edge_cut, result.bytes_moved};
  comm.allreduce_sum(reduced, 2);
  result.edge_cut = reduced[0];
  result.bytes_moved = reduced[1];
  // Lists arrive in rank order, so nodes come in ascending global id. Each send list is freed
  // once sent: a slice's edges are held at most twice (sent and received).
  const std::vector<int64_t> my_nodes = all_to_all(comm, nodes, kPartsTag).data;
  nodes = {};
  const std::vector<int64_t> my_edges = all_to_all(comm, edges, kPartsTag).data;
  edges = {};
  std::vector<float> my_features = all_to_all(comm, features, kPartsTag).data;
  features = {};
  std::vector<uint8_t> my_multilabels = all_to_all(comm, multilabels, kPartsTag).data;
  multilabels = {};

  const int64_t owned = static_cast<int64_t>(my_nodes.size()) / kNodeFields;
  std::vector<int64_t> row_start(static_cast<size_t>(owned) + 1, 0);
  for (int64_t k = 0; k < owned; ++k)
    row_start[k + 1] = row_start[k] + my_nodes[k * kNodeFields + kRowLength];
  const auto edge = [&](int64_t e, EdgeField f) { return my_edges[e * kEdgeFields + f]; };

  Part& p = result.part;
  p.rank = rank;
  p.num_parts = world;
  p.global_num_nodes = s.num_nodes;
  // Central (no in-edge from another part) first, then marginal, each ascending (build_part).
  std::vector<int64_t> order_central, order_marginal;  // positions k in my_nodes
  for (int64_t k = 0; k < owned; ++k) {
    bool remote = false;
    for (int64_t e = row_start[k]; e < row_start[k + 1] && !remote; ++e)
      remote = edge(e, kSourceOwner) != rank;
    (remote ? order_marginal : order_central).push_back(k);
  }
  ADAQP_CHECK(owned <= INT32_MAX, "owned local indices fit int32");
  std::vector<int64_t> order = order_central;
  order.insert(order.end(), order_marginal.begin(), order_marginal.end());
  p.num_central = static_cast<int64_t>(order_central.size());
  std::vector<int64_t> sorted_gid(static_cast<size_t>(owned)), local_of_sorted(owned);
  for (int64_t k = 0; k < owned; ++k) sorted_gid[k] = my_nodes[k * kNodeFields + kGid];
  for (int64_t i = 0; i < owned; ++i) {
    p.owned_gid.push_back(sorted_gid[order[i]]);
    local_of_sorted[order[i]] = i;
  }

  // Halo: remote sources of the marginal rows, by (owner, id); their degrees from their holders.
  std::vector<std::pair<int64_t, int64_t>> halo;  // owner, gid
  for (int64_t k : order_marginal)
    for (int64_t e = row_start[k]; e < row_start[k + 1]; ++e)
      if (edge(e, kSourceOwner) != rank) halo.emplace_back(edge(e, kSourceOwner), edge(e, kSource));
  std::sort(halo.begin(), halo.end());
  halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
  ADAQP_CHECK(static_cast<int64_t>(halo.size()) <= INT32_MAX, "halo indices fit int32");
  p.halo_offsets.assign(static_cast<size_t>(world) + 1, 0);
  std::vector<std::pair<int64_t, int64_t>> halo_index;  // (gid, halo index), sorted by gid
  for (size_t h = 0; h < halo.size(); ++h) {
    p.halo_gid.push_back(halo[h].second);
    ++p.halo_offsets[halo[h].first + 1];
    halo_index.emplace_back(halo[h].second, static_cast<int64_t>(h));
  }
  for (int r = 0; r < world; ++r) p.halo_offsets[r + 1] += p.halo_offsets[r];
  std::sort(halo_index.begin(), halo_index.end());
  std::vector<int64_t> halo_sorted(halo_index.size());
  for (size_t k = 0; k < halo_index.size(); ++k) halo_sorted[k] = halo_index[k].first;
  const std::vector<std::array<int64_t, 2>> degrees =
      ask_holders<std::array<int64_t, 2>>(s, halo_sorted, comm, [&](int64_t i) {
        return std::array<int64_t, 2>{s.indptr[i + 1] - s.indptr[i], out_degree[i]};
      });
  p.halo_in_degree.resize(halo.size());
  p.halo_out_degree.resize(halo.size());
  for (size_t k = 0; k < halo_index.size(); ++k) {
    p.halo_in_degree[halo_index[k].second] = degrees[k][0];
    p.halo_out_degree[halo_index[k].second] = degrees[k][1];
  }

  // In-edges of owned rows, split by column kind, columns ascending within a row.
  p.local_indptr.push_back(0);
  p.halo_indptr.push_back(0);
  for (int64_t i = 0; i < owned; ++i) {
    const int64_t k = order[i];
    const size_t local_begin = p.local_indices.size(), halo_begin = p.halo_indices.size();
    for (int64_t e = row_start[k]; e < row_start[k + 1]; ++e) {
      const int64_t u = edge(e, kSource);
      if (edge(e, kSourceOwner) == rank) {
        p.local_indices.push_back(static_cast<int32_t>(local_of_sorted[position(sorted_gid, u)]));
      } else {
        const auto it = std::lower_bound(halo_index.begin(), halo_index.end(),
                                         std::pair<int64_t, int64_t>{u, -1});
        p.halo_indices.push_back(static_cast<int32_t>(it->second));
      }
    }
    std::sort(p.local_indices.begin() + static_cast<std::ptrdiff_t>(local_begin),
              p.local_indices.end());
    std::sort(p.halo_indices.begin() + static_cast<std::ptrdiff_t>(halo_begin),
              p.halo_indices.end());
    p.local_indptr.push_back(static_cast<int64_t>(p.local_indices.size()));
    p.halo_indptr.push_back(static_cast<int64_t>(p.halo_indices.size()));
    p.owned_in_degree.push_back(my_nodes[k * kNodeFields + kRowLength]);
    p.owned_out_degree.push_back(my_nodes[k * kNodeFields + kOutDegree]);
  }

  // Send lists: each peer's halo block from this rank, in its (ascending id) order.
  std::vector<std::vector<int64_t>> wanted(world);
  for (int r = 0; r < world; ++r)
    wanted[r].assign(p.halo_gid.begin() + p.halo_offsets[r],
                     p.halo_gid.begin() + p.halo_offsets[r + 1]);
  const Received<int64_t> to_send = all_to_all(comm, wanted, kPartsTag);
  p.send_offsets.assign(to_send.offsets.begin(), to_send.offsets.end());
  for (int64_t u : to_send.data) p.send_idx.push_back(local_of_sorted[position(sorted_gid, u)]);

  // Node data by owned local index.
  p.feat_dim = s.feat_dim;
  p.num_classes = s.num_classes;
  p.multilabel = s.multilabel;
  p.features.resize(static_cast<size_t>(owned * s.feat_dim));
  if (s.multilabel) p.multilabels.resize(static_cast<size_t>(owned * s.num_classes));
  for (int64_t i = 0; i < owned; ++i) {
    const int64_t k = order[i];
    std::memcpy(&p.features[i * s.feat_dim], &my_features[k * s.feat_dim],
                sizeof(float) * s.feat_dim);
    if (s.multilabel) {
      std::memcpy(&p.multilabels[i * s.num_classes], &my_multilabels[k * s.num_classes],
                  s.num_classes);
    } else {
      p.labels.push_back(my_nodes[k * kNodeFields + kLabel]);
    }
    const int64_t split = my_nodes[k * kNodeFields + kSplit];
    if (split == 1) p.train_idx.push_back(i);
    if (split == 2) p.valid_idx.push_back(i);
    if (split == 3) p.test_idx.push_back(i);
  }
  p.global_split_counts = {static_cast<int64_t>(s.train.size()),
                           static_cast<int64_t>(s.valid.size()),
                           static_cast<int64_t>(s.test.size())};
  comm.allreduce_sum(p.global_split_counts.data(), p.global_split_counts.size());
  return result;
}

}  // namespace adaqp
