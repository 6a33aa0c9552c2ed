// Distributed aggregation on W = mpirun's world size workers: every rank builds the same generated
// graph, partitions it W ways and keeps its own part; forward rows and input gradients must equal
// the dense single-process result for the rank's owned nodes, in both exchange layouts.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/autograd.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_aggregate.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "dense_reference.h"
#include "exchange_reference.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

using test::dense_adjacency;
using test::random_matrix;
using test::rows_of;

struct AggregateCase {
  ModelType type;
  std::string method;  // partitioning
  bool cache_features;
  ExchangeLayout exchange;
};

void PrintTo(const AggregateCase& c, std::ostream* os) {
  *os << to_string(c.type) << " on a " << c.method << " partition, "
      << (c.cache_features ? "cached" : "exchanged") << " features, " << to_string(c.exchange)
      << " layout";
}

std::string aggregate_case_name(const ::testing::TestParamInfo<AggregateCase>& info) {
  return std::string(to_string(info.param.type)) + "_" + info.param.method +
         (info.param.cache_features ? "_cached_" : "_exchanged_") + to_string(info.param.exchange);
}

class DistAggregateMulti : public ::testing::TestWithParam<AggregateCase> {};

// On a symmetric graph and on a directed one, where in-degrees and out-degrees differ (so a norm
// taken from the wrong degree, or a backward through A instead of its transpose, shows).
void check_against_dense(const AggregateCase& c, const Graph& g) {
  const std::unique_ptr<Communicator> comm = test::world_comm();
  PartitionOptions popt;
  popt.method = parse_partition_method(c.method);
  popt.parts = comm->size();
  popt.seed = 4;
  const std::vector<int32_t> owner = assign_parts(g, popt);
  DistGraph graph(build_part(g, owner, comm->rank()), *comm,
                  DistGraphOptions{&conv_norm(c.type), c.cache_features, true, false, Device::cpu(),
                                   c.exchange});
  const Part& part = graph.part();
  if (comm->size() > 1) {
    EXPECT_GT(part.num_halo(), 0) << "the test needs cut edges";
  }

  const at::Tensor a = dense_adjacency(g, c.type);
  const int64_t d = 5;
  const at::Tensor h_all = random_matrix(g.num_nodes, d, 31);
  const at::Tensor r_all = random_matrix(g.num_nodes, d, 32);

  // Two layers in a row, so the tags and buffers of consecutive exchanges are exercised.
  const at::Tensor h = rows_of(h_all, part.owned_gid).requires_grad_(true);
  const at::Tensor y1 = dist_aggregate(h, graph, 1);
  const at::Tensor y2 = dist_aggregate(y1, graph, 2);
  (y2 * rows_of(r_all, part.owned_gid)).sum().backward();

  const at::Tensor h64 = h_all.to(at::kDouble), r64 = r_all.to(at::kDouble);
  EXPECT_LE(test::max_error(y1, rows_of(a.mm(h64), part.owned_gid)), test::kDenseTol);
  EXPECT_LE(test::max_error(y2, rows_of(a.mm(a.mm(h64)), part.owned_gid)), test::kDenseTol);
  EXPECT_LE(test::max_error(h.grad(), rows_of(a.t().mm(a.t().mm(r64)), part.owned_gid)),
            test::kDenseTol);

  const at::Tensor ax = graph.aggregate_features();
  const at::Tensor x_all =
      at::from_blob(const_cast<float*>(g.features.data()), {g.num_nodes, g.feat_dim}, at::kFloat);
  EXPECT_LE(test::max_error(ax, rows_of(a.mm(x_all.to(at::kDouble)), part.owned_gid)),
            test::kDenseTol);

  // Bytes sent: forward rows to every peer, then their gradients back, d floats each, twice; the
  // rows counted from the graph and the owners, not from the boundary under test.
  const test::ExchangedRows rows = test::exchanged_rows(g, owner, comm->rank(), c.exchange);
  EXPECT_EQ(graph.boundary().sends(), rows.sends);
  EXPECT_EQ(graph.boundary().recvs(), rows.recvs);
  const int64_t per_layer = rows.both() * d * static_cast<int64_t>(sizeof(float));
  const int64_t features =
      c.cache_features ? 0 : rows.sends * part.feat_dim * static_cast<int64_t>(sizeof(float));
  EXPECT_EQ(graph.comm_stats().bytes_sent, 2 * per_layer + features);
}

TEST_P(DistAggregateMulti, OwnedRowsMatchDenseForwardAndBackward) {
  {
    SCOPED_TRACE("symmetric graph");
    check_against_dense(GetParam(), test::small_graph(240, 9));
  }
  SCOPED_TRACE("directed graph");
  const Graph directed = test::directed_graph(240, 9);
  ASSERT_FALSE(at::allclose(dense_adjacency(directed, GetParam().type),
                            dense_adjacency(directed, GetParam().type).t()));
  check_against_dense(GetParam(), directed);
}

INSTANTIATE_TEST_SUITE_P(
    Partitions, DistAggregateMulti,
    ::testing::Values(AggregateCase{ModelType::kGcn, "metis", true, ExchangeLayout::kRows},
                      AggregateCase{ModelType::kGcn, "random", false, ExchangeLayout::kRows},
                      AggregateCase{ModelType::kSage, "random", true, ExchangeLayout::kRows},
                      AggregateCase{ModelType::kSage, "contiguous", false, ExchangeLayout::kRows},
                      AggregateCase{ModelType::kGcn, "metis", true, ExchangeLayout::kCover},
                      AggregateCase{ModelType::kGcn, "random", false, ExchangeLayout::kCover},
                      AggregateCase{ModelType::kSage, "random", false, ExchangeLayout::kCover},
                      AggregateCase{ModelType::kSage, "contiguous", true, ExchangeLayout::kCover}),
    aggregate_case_name);

}  // namespace
}  // namespace adaqp
