// Every exchange layout (model/halo_layout.h) against the contract DistGraph relies on, on ranks as
// threads over a graph whose parts cut edges both ways: the halo block spans the owned rows and
// the received rows; a layout either lists the rows the exchanger gathers (and receives node rows)
// or forms them with S, whose rows are the sent rows; the rows it forms are S h.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/halo_layout.h"
#include "adaqp/partition/part.h"

namespace adaqp {
namespace {

// 12 nodes on a ring with chords, owned round-robin by 3 ranks: every pair of ranks cuts edges
// both ways, and some destinations have several in-edges from one peer (partial sums pay). With
// `one_way`, also i -> i + 5 for even i: in- and out-degrees then differ from node to node.
Graph ring_with_chords(bool one_way = false) {
  std::vector<int64_t> src, dst;
  for (int64_t i = 0; i < 12; ++i) {
    for (int64_t step : {1, 3, 4}) {
      src.push_back(i);
      dst.push_back((i + step) % 12);
      src.push_back((i + step) % 12);
      dst.push_back(i);
    }
    if (one_way && i % 2 == 0) {
      src.push_back(i);
      dst.push_back((i + 5) % 12);
    }
  }
  Graph g = Graph::from_edges(12, src, dst);
  g.feat_dim = 1;
  g.features.assign(12, 1.0F);
  g.num_classes = 2;
  g.labels.assign(12, 0);
  g.train = {0};
  return g;
}

// GCN's coefficient of the edge j -> i, from the whole graph's degrees (not the library's norm).
double gcn_coefficient(const Graph& g, const std::vector<int64_t>& out_deg, int64_t j, int64_t i) {
  return 1.0 / std::sqrt(static_cast<double>(g.in_degree(i)) * static_cast<double>(out_deg[j]));
}

// The halo block's and the send matrix's coefficients against the graph (boundary.h's keys): a
// received source row j enters row i with GCN's a_ij, a received partial sum with 1; a sent
// partial sum for i is a_ij over the rank's sources j of i that no source row sent to i's owner
// carries, a sent source row is 1 at j.
void expect_coefficients_from_the_graph(const Graph& g, const std::vector<int32_t>& owner,
                                        const Part& part, const HaloLayout& l) {
  const int64_t n = g.num_nodes;
  const int me = part.rank;
  const std::vector<int64_t> out_deg = g.out_degrees();
  const Boundary& b = l.boundary();
  std::map<int64_t, int64_t> local;  // owned gid -> row
  for (size_t r = 0; r < part.owned_gid.size(); ++r)
    local[part.owned_gid[r]] = static_cast<int64_t>(r);
  std::map<std::pair<int, int64_t>, int64_t> recv_column, send_row;  // (peer, key) -> index
  for (int r = 0; r < part.num_parts; ++r) {
    for (int64_t k = b.recv_offsets[r]; k < b.recv_offsets[r + 1]; ++k)
      recv_column[{r, b.recv_keys[k]}] = k;
    for (int64_t k = b.send_offsets[r]; k < b.send_offsets[r + 1]; ++k)
      send_row[{r, b.send_keys[k]}] = k;
  }
  std::map<std::pair<int64_t, int64_t>, double> want, got;  // (row, column) -> coefficient
  for (const auto& [i, row] : local) {
    for (int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
      const int64_t j = g.indices[e];
      if (owner[j] == me) continue;
      const auto source = recv_column.find({owner[j], j});
      if (source != recv_column.end()) {
        want[{row, source->second}] += gcn_coefficient(g, out_deg, j, i);
      } else {
        const auto partial = recv_column.find({owner[j], n * (1 + owner[j]) + i});
        ASSERT_NE(partial, recv_column.end())
            << "edge " << j << " -> " << i << " travels in no row";
        want[{row, partial->second}] = 1;
      }
    }
  }
  const kernels::CsrView& h = l.halo_block();
  for (int64_t i = 0; i < h.rows; ++i) {
    for (int64_t e = h.indptr[i]; e < h.indptr[i + 1]; ++e) got[{i, h.indices[e]}] += h.values[e];
  }
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [at, value] : want)
    EXPECT_NEAR(got[at], value, 1e-6) << "halo block " << at.first << ", " << at.second;
  const kernels::CsrView* s = l.send_matrix();
  if (s == nullptr) return;
  std::map<std::pair<int64_t, int64_t>, double> want_s, got_s;
  for (const auto& [peer_key, k] : send_row) {
    const auto [peer, key] = peer_key;
    if (key < n) {
      want_s[{k, local.at(key)}] = 1;
      continue;
    }
    const int64_t i = key - n * (1 + me);
    for (int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
      const int64_t j = g.indices[e];
      if (owner[j] == me && send_row.count({peer, j}) == 0) {
        want_s[{k, local.at(j)}] += gcn_coefficient(g, out_deg, j, i);
      }
    }
  }
  for (int64_t k = 0; k < s->rows; ++k) {
    for (int64_t e = s->indptr[k]; e < s->indptr[k + 1]; ++e)
      got_s[{k, s->indices[e]}] += s->values[e];
  }
  ASSERT_EQ(got_s.size(), want_s.size());
  for (const auto& [at, value] : want_s)
    EXPECT_NEAR(got_s[at], value, 1e-6) << "send matrix " << at.first << ", " << at.second;
}

TEST(HaloLayout, EveryLayoutKeepsTheContract) {
  const std::vector<int32_t> owner = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
  for (const bool one_way : {false, true}) {
    const Graph g = ring_with_chords(one_way);
    for (ExchangeLayout layout : {ExchangeLayout::kRows, ExchangeLayout::kCover}) {
      SCOPED_TRACE(std::string(to_string(layout)) + (one_way ? ", uneven degrees" : ""));
      run_thread_ranks(3, [&](Communicator& comm) {
        const Part part = build_part(g, owner, comm.rank());
        const auto l =
            make_halo_layout(layout, part, comm, conv_norm(ModelType::kGcn), Device::cpu());
        expect_coefficients_from_the_graph(g, owner, part, *l);
        const Boundary& b = l->boundary();
        ASSERT_GT(b.sends(), 0);
        ASSERT_GT(b.recvs(), 0);
        EXPECT_EQ(l->halo_block().rows, part.num_owned());
        EXPECT_EQ(l->halo_block().cols, b.recvs());
        EXPECT_EQ(l->receives_node_rows(), l->send_list() != nullptr);
        // h's row i holds i + 1, so that a wrong row or coefficient shows.
        const int64_t d = 2;
        at::Tensor h = at::arange(1, part.num_owned() * d + 1, at::kFloat).view({-1, d});
        if (l->send_list() != nullptr) {
          EXPECT_EQ(static_cast<int64_t>(l->send_list()->size()), b.sends());
          EXPECT_EQ(l->send_matrix(), nullptr);
          EXPECT_EQ(l->sent_rows(h.data_ptr<float>(), d), h.data_ptr<float>());  // gathered
        } else {
          const kernels::CsrView* s = l->send_matrix();
          ASSERT_NE(s, nullptr);
          EXPECT_EQ(s->rows, b.sends());
          EXPECT_EQ(s->cols, part.num_owned());
          const float* rows = l->sent_rows(h.data_ptr<float>(), d);
          for (int64_t k = 0; k < s->rows; ++k) {
            for (int64_t c = 0; c < d; ++c) {
              double expect = 0;
              for (int64_t e = s->indptr[k]; e < s->indptr[k + 1]; ++e) {
                expect += s->values[e] * h[s->indices[e]][c].item<double>();
              }
              EXPECT_NEAR(rows[k * d + c], expect, 1e-5) << "sent row " << k << ", column " << c;
            }
          }
          l->release_sent_rows();
        }
      });
    }
  }
}

}  // namespace
}  // namespace adaqp
