// Every exchange layout (model/halo_layout.h) against the contract DistGraph relies on, on ranks as
// threads over a graph whose parts cut edges both ways: the halo block spans the owned rows and
// the received rows; a layout either lists the rows the exchanger gathers (and receives node rows)
// or forms them with S, whose rows are the sent rows; the rows it forms are S h.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/halo_layout.h"
#include "adaqp/partition/part.h"

namespace adaqp {
namespace {

// 12 nodes on a ring with chords, owned round-robin by 3 ranks: every pair of ranks cuts edges
// both ways, and some destinations have several in-edges from one peer (partial sums pay).
Graph ring_with_chords() {
  std::vector<int64_t> src, dst;
  for (int64_t i = 0; i < 12; ++i) {
    for (int64_t step : {1, 3, 4}) {
      src.push_back(i);
      dst.push_back((i + step) % 12);
      src.push_back((i + step) % 12);
      dst.push_back(i);
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

TEST(HaloLayout, EveryLayoutKeepsTheContract) {
  const Graph g = ring_with_chords();
  const std::vector<int32_t> owner = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2};
  for (ExchangeLayout layout : {ExchangeLayout::kRows, ExchangeLayout::kCover}) {
    SCOPED_TRACE(to_string(layout));
    run_thread_ranks(3, [&](Communicator& comm) {
      const Part part = build_part(g, owner, comm.rank());
      const auto l =
          make_halo_layout(layout, part, comm, conv_norm(ModelType::kGcn), Device::cpu());
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

}  // namespace
}  // namespace adaqp
