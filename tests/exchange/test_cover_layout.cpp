// The cover layout's start-up exchange (exchange/cover_layout.h) on ranks as threads: what each
// end agrees on for a hand-made multigraph, and the aggregation it gives against the rows layout.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/exchange/cover_layout.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/partition/part.h"
// Private to src/exchange: the reader of the start-up lists, tested on its own.
#include "../../src/exchange/peer_lists.h"

namespace adaqp {
namespace {

// Nodes 0 (A) and 1 (B) on rank 0, node 2 (X) on rank 1; edges A -> X twice, B -> X once, and a
// self-loop on each node. The pair's minimum cover is {X}: one partial sum of three edges, more
// edges than rank 0 sends rows.
Graph multigraph() {
  Graph g = Graph::from_edges(3, {0, 0, 1, 0, 1, 2}, {2, 2, 2, 0, 1, 2});
  g.feat_dim = 2;
  g.features = {1, 2, 3, 4, 5, 6};
  g.num_classes = 2;
  g.labels = {0, 1, 0};
  g.train = {0, 1, 2};
  return g;
}

TEST(CoverLayout, PartialSumOfAMultigraphCarriesEveryDuplicateEdge) {
  const Graph g = multigraph();
  const std::vector<int32_t> owner = {0, 0, 1};
  run_thread_ranks(2, [&](Communicator& comm) {
    const Part part = build_part(g, owner, comm.rank());
    const CoverLayout cover = cover_layout(part, comm);
    const Boundary& b = cover.boundary;
    if (comm.rank() == 0) {
      EXPECT_EQ(part.send_count_to(1), 2);  // the rows layout: A and B
      ASSERT_EQ(b.send_count_to(1), 1);     // the cover: X's partial sum
      ASSERT_EQ(cover.send_indptr, (std::vector<int64_t>{0, 3}));
      EXPECT_EQ(cover.send_dst_in_degree, (std::vector<int64_t>{4}));  // X: 3 edges + self-loop
      EXPECT_EQ(b.send_keys, (std::vector<int64_t>{3 * 1 + 2}));       // N * (1 + sender) + X
    } else {
      ASSERT_EQ(b.recv_count_from(0), 1);
      EXPECT_EQ(cover.recv_out_degree, (std::vector<int64_t>{-1}));
      EXPECT_EQ(cover.halo_indptr, (std::vector<int64_t>{0, 1}));
      EXPECT_EQ(b.recv_keys, (std::vector<int64_t>{5}));
    }
  });
}

TEST(CoverLayout, AggregationOfAMultigraphMatchesTheRowsLayout) {
  const Graph g = multigraph();
  const std::vector<int32_t> owner = {0, 0, 1};
  for (ModelType type : {ModelType::kGcn, ModelType::kSage}) {
    std::vector<at::Tensor> by_layout[2];
    for (ExchangeLayout layout : {ExchangeLayout::kRows, ExchangeLayout::kCover}) {
      std::vector<at::Tensor> out(2);
      run_thread_ranks(2, [&](Communicator& comm) {
        DistGraph graph(
            build_part(g, owner, comm.rank()), comm,
            DistGraphOptions{&conv_norm(type), false, true, false, Device::cpu(), layout});
        out[comm.rank()] = graph.aggregate_features().clone();
      });
      by_layout[static_cast<int>(layout)] = out;
    }
    for (int r = 0; r < 2; ++r) {
      EXPECT_TRUE(at::allclose(by_layout[0][r], by_layout[1][r], 1e-6, 1e-6))
          << to_string(type) << ", rank " << r << ": rows " << by_layout[0][r] << " cover "
          << by_layout[1][r];
    }
    // X's row: its self-loop and its three in-edges (A twice) through the partial sum.
    EXPECT_GT(by_layout[1][1].abs().sum().item<double>(), 0.0);
  }
}

// The start-up lists a sender reads (src/exchange/peer_lists.h) are checked value by value: a
// value outside its bounds, a list that ends early or one with entries left over, a partial sum
// without an edge, a destination without in-degree or an edge outside the send list is an error.
TEST(PeerLists, EveryValueIsCheckedAgainstItsBounds) {
  using exchange_detail::ListReader;
  const std::vector<int64_t> list = {3, 5};
  ListReader in(list, 2, "test lists");
  EXPECT_EQ(in.next("first", 0, 3), 3);  // both bounds are inclusive
  EXPECT_EQ(in.remaining(), 1);
  EXPECT_THROW(in.next("second", 0, 4), InvariantError);
  ListReader low(list, 2, "test lists");
  EXPECT_THROW(low.next("first", 4, 10), InvariantError);
  ListReader whole(list, 2, "test lists");
  whole.next("first", 0, 3);
  EXPECT_THROW(whole.expect_end(), InvariantError);
  whole.next("second", 5, 5);
  whole.expect_end();
  EXPECT_THROW(whole.next("third", 0, 9), InvariantError);

  Part part;
  part.send_idx = {10, 11, 12, 13, 14};
  std::vector<int32_t> sources;
  // in-degree 2, one edge, from position 1 of the 3 rows from position 1 (send_idx 12)
  const std::vector<int64_t> good = {2, 1, 1};
  ListReader ok(good, 1, "test lists");
  EXPECT_EQ(exchange_detail::read_partial_sum(ok, part, 1, 3, &sources), 2);
  EXPECT_EQ(sources, (std::vector<int32_t>{12}));
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{0, 1, 1},     // in-degree 0
                                          std::vector<int64_t>{2, 0},        // no edge
                                          std::vector<int64_t>{2, 1, 3}}) {  // position 3 of 3
    ListReader reader(bad, 1, "test lists");
    EXPECT_THROW(exchange_detail::read_partial_sum(reader, part, 1, 3, &sources), InvariantError)
        << bad[0] << " " << bad[1];
  }
}

// A rank that announces a negative number of entries is an error naming the lists and the rank
// (here rank 1 sends -1 where exchange_lists sends a list's length).
TEST(PeerLists, NegativeLengthAnnouncedIsAnError) {
  run_thread_ranks(2, [](Communicator& comm) {
    if (comm.rank() == 1) {
      int64_t length = -1, ignored = 0;
      ExchangeBuffers counts = ExchangeBuffers::none(2);
      counts.send[0] = &length;
      counts.send_bytes[0] = sizeof(length);
      counts.recv[0] = &ignored;
      counts.recv_bytes[0] = sizeof(ignored);
      comm.exchange(counts, {77})->wait();
      return;
    }
    try {
      exchange_detail::exchange_lists(comm, std::vector<std::vector<int64_t>>(2), 77, "test lists");
      ADD_FAILURE() << "no error for a negative length";
    } catch (const InvariantError& e) {
      EXPECT_NE(std::string(e.what()).find("test lists: entries announced by rank 1"),
                std::string::npos)
          << e.what();
    }
  });
}

}  // namespace
}  // namespace adaqp
