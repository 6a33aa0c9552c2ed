// The distributed aggregation on CUDA under real mpirun over the NCCL communicator, driven
// directly (no trainer): the halo exchanger, the CUDA codec and the cuSPARSE products. Forward
// rows and input gradients of two aggregations in a row equal the dense single-process result in
// both exchange layouts, with and without overlap, with exactly the full-precision bytes; quantized
// exchanges (random widths: 2, 4 and 8 bits in one message set) give the CPU exchanger's values
// over MPI on the same part and plan (but for the few entries that stochastic rounding moves by a
// step where its input differs in the last bits) and its bytes. Skipped, with the reason, without
// NCCL and a CUDA libtorch, or where ranks would share a GPU without a distinct NCCL_HOSTID each.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>

#include "adaqp/config.h"
#include "mpi_skip.h"

#if ADAQP_WITH_NCCL && ADAQP_WITH_TORCH_CUDA
#include <ATen/ATen.h>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/nccl_communicator.h"
#include "adaqp/kernels/cuda_device.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_aggregate.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/tensor/torch_device.h"
#include "dense_reference.h"
#include "nccl_skip.h"
#endif

namespace adaqp {
namespace {

#if ADAQP_WITH_NCCL && ADAQP_WITH_TORCH_CUDA

using test::dense_adjacency;
using test::random_matrix;
using test::rows_of;

constexpr double kTimeoutS = 60.0;
constexpr int64_t kRowWidth = 5;
constexpr int kLayers = 3;  // the plan's; the aggregations below are layers 1 and 2

struct NcclAggregateCase {
  ModelType type;
  ExchangeLayout exchange;
  bool overlap;
  bool cache_features;
};

void PrintTo(const NcclAggregateCase& c, std::ostream* os) {
  *os << to_string(c.type) << ", " << to_string(c.exchange) << " layout, "
      << (c.overlap ? "overlapped" : "not overlapped") << ", "
      << (c.cache_features ? "cached" : "exchanged") << " features";
}

std::string nccl_case_name(const ::testing::TestParamInfo<NcclAggregateCase>& info) {
  const NcclAggregateCase& c = info.param;
  return std::string(to_string(c.type)) + "_" + to_string(c.exchange) +
         (c.overlap ? "_overlap" : "_serial") + (c.cache_features ? "_cached" : "_exchanged");
}

// What one rank computed (on the CPU, whichever device computed it).
struct Aggregated {
  at::Tensor y1, y2, grad, ax;  // A h, A A h, the gradient of <A A h, r> in h, A X
  int64_t bytes_sent = 0;
  int64_t sends = 0, recvs = 0;  // rows per exchange
};

Graph test_graph() {
  return test::small_graph(240, 9);
}

// y1 = A h, y2 = A y1 and the gradient of <y2, r> on `device`, every exchange quantized by the
// `scheme`'s plan for epoch 3 when given.
Aggregated aggregate_twice(const Graph& g, Communicator& comm, const NcclAggregateCase& c,
                           const Device& device, const std::optional<SchemeOptions>& scheme) {
  PartitionOptions popt;
  popt.method = parse_partition_method("random");  // many cut edges
  popt.parts = comm.size();
  popt.seed = 4;
  DistGraph graph(
      build_part(g, assign_parts(g, popt), comm.rank()), comm,
      DistGraphOptions{&conv_norm(c.type), c.cache_features, true, c.overlap, device, c.exchange});
  const Part& part = graph.part();
  QuantPlan plan;
  if (scheme) plan = scheme_plan(graph.boundary(), kLayers, *scheme, 3);
  const QuantPlanScope quantized(graph, scheme ? &plan : nullptr);
  const c10::Device on = torch_device(device);
  const at::Tensor h = rows_of(random_matrix(g.num_nodes, kRowWidth, 31), part.owned_gid)
                           .to(on)
                           .requires_grad_(true);
  const at::Tensor r = rows_of(random_matrix(g.num_nodes, kRowWidth, 32), part.owned_gid).to(on);
  const at::Tensor y1 = dist_aggregate(h, graph, 1);
  const at::Tensor y2 = dist_aggregate(y1, graph, 2);
  (y2 * r).sum().backward();
  Aggregated out{y1.detach().cpu(), y2.detach().cpu(), h.grad().cpu(),
                 graph.aggregate_features().cpu()};
  out.bytes_sent = graph.comm_stats().bytes_sent;
  out.sends = graph.boundary().sends();
  out.recvs = graph.boundary().recvs();
  return out;
}

// The share of entries of got within tol of want's.
double share_within(const at::Tensor& got, const at::Tensor& want, double tol) {
  const at::Tensor close = (got.to(at::kDouble) - want.to(at::kDouble)).abs().le(tol);
  return close.to(at::kDouble).mean().item<double>();
}

class NcclDistAggregate : public ::testing::TestWithParam<NcclAggregateCase> {
 protected:
  void SetUp() override {
    const std::string reason = test::nccl_skip_reason();
    if (!reason.empty()) GTEST_SKIP() << test::kNeedsGpu << reason;
    device_ = Device::cuda(test::world_rank() % kernels::cuda_device_count());
    nccl_ = make_nccl_communicator(MPI_COMM_WORLD, device_.index, kTimeoutS);
  }

  Device device_;
  std::unique_ptr<Communicator> nccl_;
};

TEST_P(NcclDistAggregate, OwnedRowsMatchDenseForwardAndBackward) {
  const NcclAggregateCase c = GetParam();
  const Graph g = test_graph();
  const Aggregated got = aggregate_twice(g, *nccl_, c, device_, std::nullopt);
  if (nccl_->size() > 1) {
    EXPECT_GT(got.recvs, 0) << "the test needs cut edges";
  }
  PartitionOptions popt;
  popt.method = parse_partition_method("random");
  popt.parts = nccl_->size();
  popt.seed = 4;
  const Part part = build_part(g, assign_parts(g, popt), nccl_->rank());
  const at::Tensor a = dense_adjacency(g, c.type);
  const at::Tensor h = random_matrix(g.num_nodes, kRowWidth, 31).to(at::kDouble);
  const at::Tensor r = random_matrix(g.num_nodes, kRowWidth, 32).to(at::kDouble);
  const at::Tensor x =
      at::from_blob(const_cast<float*>(g.features.data()), {g.num_nodes, g.feat_dim}, at::kFloat);
  EXPECT_LE(test::max_error(got.y1, rows_of(a.mm(h), part.owned_gid)), test::kDenseTol);
  EXPECT_LE(test::max_error(got.y2, rows_of(a.mm(a.mm(h)), part.owned_gid)), test::kDenseTol);
  EXPECT_LE(test::max_error(got.grad, rows_of(a.t().mm(a.t().mm(r)), part.owned_gid)),
            test::kDenseTol);
  EXPECT_LE(test::max_error(got.ax, rows_of(a.mm(x.to(at::kDouble)), part.owned_gid)),
            test::kDenseTol);
  // Forward rows to every peer, then their gradients back, kRowWidth floats each, for both layers;
  // the features' rows once unless cached.
  const int64_t per_layer =
      (got.sends + got.recvs) * kRowWidth * static_cast<int64_t>(sizeof(float));
  const int64_t features =
      c.cache_features ? 0 : got.sends * g.feat_dim * static_cast<int64_t>(sizeof(float));
  EXPECT_EQ(got.bytes_sent, 2 * per_layer + features);
}

TEST_P(NcclDistAggregate, QuantizedExchangesGiveTheCpuExchangersValuesAndBytes) {
  const NcclAggregateCase c = GetParam();
  const Graph g = test_graph();
  SchemeOptions scheme;
  scheme.scheme = BitScheme::kRandom;
  scheme.seed = 11;
  const Aggregated gpu = aggregate_twice(g, *nccl_, c, device_, scheme);
  const std::unique_ptr<Communicator> mpi = make_mpi_communicator(MPI_COMM_WORLD, kTimeoutS);
  const Aggregated cpu = aggregate_twice(g, *mpi, c, Device::cpu(), scheme);
  // One codec with the same noise keys: the rows layout's layer-1 rows are the same input on both
  // devices, so the same codes, summed in another order. Every other message is itself a product
  // (the cover's S h, A_halo^T g, layer 2's input), whose last bits differ between cuSPARSE and
  // the CPU; stochastic rounding turns such a difference into another code now and then (about
  // 1e-5 of the elements at 8 bits, one step each), so for those all but a few entries agree.
  if (c.exchange == ExchangeLayout::kRows) {
    EXPECT_LE(test::max_error(gpu.y1, cpu.y1), test::kDenseTol);
  }
  for (const auto& [got, want, what] :
       {std::tuple{&gpu.y1, &cpu.y1, "A h"}, std::tuple{&gpu.y2, &cpu.y2, "A A h"},
        std::tuple{&gpu.grad, &cpu.grad, "the input gradient"}}) {
    EXPECT_GE(share_within(*got, *want, test::kDenseTol), 0.99) << what;
  }
  EXPECT_EQ(gpu.bytes_sent, cpu.bytes_sent);
  if (nccl_->size() > 1) {
    // Quantization did change the rows: the comparison is not one of two exact products.
    const Aggregated exact = aggregate_twice(g, *mpi, c, Device::cpu(), std::nullopt);
    EXPECT_GT(test::max_error(cpu.y2, exact.y2), 100 * test::kDenseTol);
    EXPECT_LT(cpu.bytes_sent, exact.bytes_sent);
  }
}

INSTANTIATE_TEST_SUITE_P(
    NcclLayouts, NcclDistAggregate,
    ::testing::Values(NcclAggregateCase{ModelType::kGcn, ExchangeLayout::kRows, false, true},
                      NcclAggregateCase{ModelType::kGcn, ExchangeLayout::kCover, true, false},
                      NcclAggregateCase{ModelType::kSage, ExchangeLayout::kRows, true, false},
                      NcclAggregateCase{ModelType::kSage, ExchangeLayout::kCover, false, true}),
    nccl_case_name);

#else

TEST(NcclDistAggregate, RequiresNcclAndCudaLibtorch) {
  GTEST_SKIP() << test::kNeedsGpu << "built without NCCL or without a CUDA libtorch";
}

#endif

}  // namespace
}  // namespace adaqp
