// A part file's mostly-zero features are read as CSR (partition/part.h, feature_csr) and go into
// layer 0's sparse inputs on the host without ever being made dense: a DistGraph built from such a
// part holds exactly what one built from the same part with dense features holds (A X and X as
// CSR, bit for bit), on both layouts that cache A X, for models that read X (GraphSAGE, GAT) and
// one that does not (GCN). Where A X is too dense to keep sparse, both hold the same dense
// matrices.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/partition_dir.h"
#include "dense_reference.h"
#include "mpi_world.h"
#include "test_util.h"

namespace adaqp {
namespace {

// `g` with `dim` feature columns, each value non-zero with probability `density` (some zeros
// -0.0, which a part file stores and the sparse inputs leave out).
void make_sparse_features(Graph& g, int64_t dim, double density) {
  std::mt19937 rng(29);
  std::bernoulli_distribution nonzero(density), negative_zero(0.2);
  std::normal_distribution<float> value(0.0f, 1.0f);
  g.feat_dim = dim;
  g.features.resize(static_cast<size_t>(g.num_nodes * dim));
  for (float& x : g.features) x = nonzero(rng) ? value(rng) : (negative_zero(rng) ? -0.0f : 0.0f);
}

void expect_same(const SparseFeatures* a, const SparseFeatures* b, const char* what) {
  ASSERT_EQ(a == nullptr, b == nullptr) << what;
  if (a == nullptr) return;
  EXPECT_EQ(a->rows, b->rows) << what;
  EXPECT_EQ(a->cols, b->cols) << what;
  for (const auto& [x, y] : {std::tuple{&a->indptr, &b->indptr},
                             {&a->indices, &b->indices},
                             {&a->t_indptr, &b->t_indptr},
                             {&a->t_rows, &b->t_rows},
                             {&a->t_entries, &b->t_entries}})
    EXPECT_TRUE(at::equal(*x, *y)) << what;
  EXPECT_TRUE(at::equal(a->values.view(at::kInt), b->values.view(at::kInt))) << what << " values";
}

void expect_same_dense(const at::Tensor& a, const at::Tensor& b, const char* what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (a.defined()) {
    EXPECT_TRUE(at::equal(a.view(at::kInt), b.view(at::kInt))) << what;
  }
}

struct InputCase {
  const char* name;
  ModelType type;
  ExchangeLayout exchange;
  int64_t dim;
  double density;
  bool sparse_ax;  // A X kept sparse (else too dense: both sides dense)
};

class SparsePartInput : public ::testing::TestWithParam<InputCase> {};

TEST_P(SparsePartInput, HoldsWhatTheDensePartGives) {
  const InputCase c = GetParam();
  const std::unique_ptr<Communicator> comm = test::world_comm();
  Graph g = test::small_graph(240, 9);
  make_sparse_features(g, c.dim, c.density);
  PartitionOptions popt;
  popt.parts = comm->size();
  // Every rank writes the same partition (byte-identical files) and reads its own part.
  const test::TempDir tmp;
  write_partition(tmp.str("part"), g, popt);
  Part from_file = load_part(tmp.str("part"), comm->rank(), comm->size());
  // Not fatal before the collective constructors below: one rank returning would hang the others.
  EXPECT_TRUE(from_file.feature_csr.has_value()) << "the part file must hold CSR features";
  Part dense_part = build_part(g, assign_parts(g, popt), comm->rank());
  densify_features(dense_part);
  EXPECT_EQ(from_file.owned_gid, dense_part.owned_gid);

  const bool gat = c.type == ModelType::kGat;
  DistGraphOptions opt{&conv_norm(c.type),
                       /*cache_features=*/!gat,
                       /*keep_features=*/c.type != ModelType::kGcn,
                       /*overlap=*/false,
                       Device::cpu(),
                       c.exchange,
                       /*products=*/!gat};
  DistGraph sparse(std::move(from_file), *comm, opt);
  DistGraph dense(dense_part, *comm, opt);
  EXPECT_FALSE(sparse.part().feature_csr.has_value()) << "freed after start-up";
  EXPECT_EQ(sparse.made_features_dense(), !c.sparse_ax);
  EXPECT_TRUE(dense.made_features_dense());
  expect_same(sparse.sparse_aggregated_features(), dense.sparse_aggregated_features(), "A X");
  expect_same(sparse.sparse_features(), dense.sparse_features(), "X");
  expect_same_dense(sparse.features(), dense.features(), "dense X");
  if (gat) {
    EXPECT_NE(sparse.sparse_features(), nullptr);
  } else {
    EXPECT_EQ(sparse.sparse_aggregated_features() != nullptr, c.sparse_ax);
    EXPECT_EQ(sparse.sparse_features() != nullptr, c.sparse_ax && c.type == ModelType::kSage);
    if (!c.sparse_ax)
      expect_same_dense(sparse.aggregate_features(), dense.aggregate_features(), "dense A X");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SparsePartInput,
    ::testing::Values(
        InputCase{"GcnRows", ModelType::kGcn, ExchangeLayout::kRows, 64, 0.02, true},
        InputCase{"SageRows", ModelType::kSage, ExchangeLayout::kRows, 64, 0.02, true},
        InputCase{"GcnCover", ModelType::kGcn, ExchangeLayout::kCover, 64, 0.02, true},
        InputCase{"SageCover", ModelType::kSage, ExchangeLayout::kCover, 64, 0.02, true},
        InputCase{"GatRows", ModelType::kGat, ExchangeLayout::kRows, 64, 0.02, true},
        InputCase{"SageDenseProduct", ModelType::kSage, ExchangeLayout::kRows, 16, 0.15, false},
        InputCase{"GcnDenseProduct", ModelType::kGcn, ExchangeLayout::kCover, 16, 0.15, false}),
    [](const ::testing::TestParamInfo<InputCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace adaqp
