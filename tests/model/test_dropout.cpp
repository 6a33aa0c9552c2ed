// The model's dropout operations (model/dropout.h) keep bits for backward, and compute exactly
// what the composition of libtorch operations they replace computes: ReLU then a float mask, and
// Linear layers over masked rows. Forward values and gradients are compared bit for bit.
#include "adaqp/model/dropout.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/linear.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace adaqp {
namespace {

at::Tensor gids_of(int64_t n) {
  return at::arange(1000, 1000 + n, at::kLong);
}

// The float mask a DropoutMask stands for: 0 or its scale per element.
at::Tensor float_mask(const DropoutMask& m, int64_t n, int64_t width) {
  at::Tensor ones = at::ones({n, width});
  kernels::apply_mask(Device::cpu(), ones.data_ptr<float>(), n, width, m.view(), false,
                      ones.data_ptr<float>(), nullptr);
  return ones;
}

void expect_identical(const at::Tensor& a, const at::Tensor& b, const char* what) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  EXPECT_TRUE(at::equal(a, b)) << what << ": max difference " << (a - b).abs().max().item<float>();
}

TEST(ReluDropout, SameValuesAndGradientAsReluThenMask) {
  const int64_t n = 257, d = 45;
  const DropoutMask m = draw_dropout(DropoutKey{7, 3, 2}, 0.5f, gids_of(n), d);
  const at::Tensor mask = float_mask(m, n, d);
  // At least one element of each kind, so that the test can tell them apart.
  ASSERT_GT(mask.eq(0).sum().item<int64_t>(), 0);
  ASSERT_GT(mask.eq(2).sum().item<int64_t>(), 0);
  torch::manual_seed(3);
  const at::Tensor leaf = at::randn({n, d}).requires_grad_(true);
  const at::Tensor r = at::randn({n, d});

  const at::Tensor ref = at::relu(leaf * 1.0f) * mask;
  (ref * r).sum().backward();
  const at::Tensor ref_grad = leaf.grad().clone();
  leaf.mutable_grad() = at::Tensor();

  at::Tensor y = leaf * 1.0f;  // a non-leaf the operation may overwrite
  const at::Tensor out = relu_dropout_(y, m);
  EXPECT_EQ(out.data_ptr(), y.data_ptr()) << "in place";
  expect_identical(out, ref, "values");
  (out * r).sum().backward();
  expect_identical(leaf.grad(), ref_grad, "gradient");
}

TEST(ReluDropout, WithoutAMaskIsRelu) {
  torch::manual_seed(4);
  const at::Tensor leaf = at::randn({30, 11}).requires_grad_(true);
  at::Tensor y = leaf * 1.0f;
  const at::Tensor out = relu_dropout_(y, DropoutMask{});
  expect_identical(out, at::relu(leaf.detach()), "values");
  out.sum().backward();
  expect_identical(leaf.grad(), (leaf.detach() > 0).to(at::kFloat), "gradient");
}

// The layer-0 computation it replaces: Linear(z * mask) [+ Linear_nobias(x * mask')].
TEST(DropoutLinear, SameValuesAndGradientsAsLinearLayersOverMaskedRows) {
  const int64_t n = 300, d = 23, out_dim = 17;
  for (bool root : {false, true}) {
    torch::manual_seed(5);
    const at::Tensor z = at::randn({n, d}), x = at::randn({n, d});
    const at::Tensor w = at::randn({out_dim, d}).requires_grad_(true);
    const at::Tensor b = at::randn({out_dim}).requires_grad_(true);
    const at::Tensor rw = at::randn({out_dim, d}).requires_grad_(true);
    const DropoutMask m = draw_dropout(DropoutKey{9, 1, 0}, 0.3f, gids_of(n), root ? 2 * d : d);
    const at::Tensor mask = float_mask(m, n, root ? 2 * d : d);
    const at::Tensor r = at::randn({n, out_dim});

    at::Tensor ref = torch::nn::functional::linear(mask.narrow(1, 0, d) * z, w, b);
    if (root) ref = ref + torch::nn::functional::linear(mask.narrow(1, d, d) * x, rw);
    (ref * r).sum().backward();
    const at::Tensor gw = w.grad().clone(), gb = b.grad().clone();
    const at::Tensor grw = root ? rw.grad().clone() : at::Tensor();
    for (const at::Tensor& p : {w, b, rw}) p.mutable_grad() = at::Tensor();

    const at::Tensor y =
        dropout_linear(z, root ? x : at::Tensor(), m, w, b, root ? rw : at::Tensor());
    expect_identical(y, ref, "values");
    (y * r).sum().backward();
    expect_identical(w.grad(), gw, "weight gradient");
    expect_identical(b.grad(), gb, "bias gradient");
    if (root) {
      expect_identical(rw.grad(), grw, "root gradient");
    } else {
      EXPECT_FALSE(rw.grad().defined());
    }
  }
}

// Layer 0 over A X kept sparse: the same values and gradients as over the dense A X with the
// dense mask of the same draw, up to summation order (float sums of up to 40 terms of magnitude ~4
// here: 1e-5 absolute), with and without dropout. So the mask drawn at the entries is the dense
// one there, and z's zeros are never read.
TEST(SparseDropoutLinear, SameValuesAndGradientsAsOverTheDenseInput) {
  const int64_t n = 300, d = 40, out_dim = 17;
  torch::manual_seed(6);
  const at::Tensor z = at::randn({n, d}) * (at::rand({n, d}) < 0.08).to(at::kFloat);
  const std::optional<SparseFeatures> sparse = sparsify(z, kMaxSparseFeatureDensity);
  ASSERT_TRUE(sparse.has_value()) << "density " << (z != 0).to(at::kFloat).mean().item<float>();
  EXPECT_EQ(sparse->nnz(), (z != 0).sum().item<int64_t>());
  for (float p : {0.0f, 0.5f}) {
    const FeatureDropout drop{DropoutKey{9, 1, 0}, p};
    const at::Tensor w = at::randn({out_dim, d}).requires_grad_(true);
    const at::Tensor b = at::randn({out_dim}).requires_grad_(true);
    const DropoutMask dense_mask = draw_dropout(drop, gids_of(n), d);
    const at::Tensor r = at::randn({n, out_dim});
    const at::Tensor ref = p > 0 ? dropout_linear(z, at::Tensor(), dense_mask, w, b, at::Tensor())
                                 : torch::nn::functional::linear(z, w, b);
    (ref * r).sum().backward();
    const at::Tensor gw = w.grad().clone(), gb = b.grad().clone();
    for (const at::Tensor& t : {w, b}) t.mutable_grad() = at::Tensor();

    const at::Tensor y =
        sparse_dropout_linear(*sparse, draw_sparse_dropout(drop, *sparse, gids_of(n), 0), w, b);
    EXPECT_TRUE(at::allclose(y, ref, 0, 1e-5))
        << "values, p " << p << ": max difference " << (y - ref).abs().max().item<float>();
    (y * r).sum().backward();
    EXPECT_TRUE(at::allclose(w.grad(), gw, 0, 1e-5))
        << "weight gradient, p " << p << ": max difference "
        << (w.grad() - gw).abs().max().item<float>();
    expect_identical(b.grad(), gb, "bias gradient");
  }
}

// A root term (GraphSAGE's X R^T, no bias): the mask is the second half of a node's mask row.
TEST(SparseDropoutLinear, RootTermReadsTheSecondHalfOfTheMaskAndHasNoBias) {
  const int64_t n = 200, d = 30, out_dim = 9;
  torch::manual_seed(7);
  const at::Tensor x = at::randn({n, d}) * (at::rand({n, d}) < 0.1).to(at::kFloat);
  const std::optional<SparseFeatures> sparse = sparsify(x, kMaxSparseFeatureDensity);
  ASSERT_TRUE(sparse.has_value());
  const FeatureDropout drop{DropoutKey{2, 5, 0}, 0.4f};
  const at::Tensor r = at::randn({out_dim, d}).requires_grad_(true);
  const at::Tensor mask = float_mask(draw_dropout(drop, gids_of(n), 2 * d), n, 2 * d);
  const at::Tensor ref = torch::nn::functional::linear(mask.narrow(1, d, d) * x, r);
  const at::Tensor weights = at::randn({n, out_dim});
  (ref * weights).sum().backward();
  const at::Tensor gr = r.grad().clone();
  r.mutable_grad() = at::Tensor();
  const at::Tensor y = sparse_dropout_linear(
      *sparse, draw_sparse_dropout(drop, *sparse, gids_of(n), d), r, at::Tensor());
  EXPECT_TRUE(at::allclose(y, ref, 0, 1e-5)) << (y - ref).abs().max().item<float>();
  (y * weights).sum().backward();
  EXPECT_TRUE(at::allclose(r.grad(), gr, 0, 1e-5)) << (r.grad() - gr).abs().max().item<float>();
}

TEST(Sparsify, KeepsEveryNonZeroAndOnlyBelowTheDensity) {
  at::Tensor z = at::zeros({10, 10});
  z.index_put_({0, 9}, 4.0f);
  z.index_put_({3, 4}, 2.5f);
  z.index_put_({3, 0}, -1.0f);
  z.index_put_({9, 9}, 7.0f);
  const std::optional<SparseFeatures> s = sparsify(z, 0.04);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->density(), 0.04);
  EXPECT_TRUE(at::equal(s->indptr, at::tensor({0, 1, 1, 1, 3, 3, 3, 3, 3, 3, 4}, at::kLong)));
  EXPECT_TRUE(at::equal(s->indices, at::tensor({9, 0, 4, 9}, at::kInt)));
  EXPECT_TRUE(at::equal(s->values, at::tensor({4.0f, -1.0f, 2.5f, 7.0f})));
  // Columns 0, 4, 9: (3, 0) is entry 1, (3, 4) entry 2, (0, 9) entry 0 and (9, 9) entry 3.
  EXPECT_TRUE(at::equal(s->t_indptr, at::tensor({0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 4}, at::kLong)));
  EXPECT_TRUE(at::equal(s->t_rows, at::tensor({3, 3, 0, 9}, at::kInt)));
  EXPECT_TRUE(at::equal(s->t_entries, at::tensor({1, 2, 0, 3}, at::kInt)));
  EXPECT_FALSE(sparsify(z, 0.03).has_value());
  // A non-finite value keeps the matrix dense, at any density.
  for (const float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
    z.index_put_({3, 4}, bad);
    EXPECT_FALSE(sparsify(z, 0.04).has_value()) << bad;
  }
}

}  // namespace
}  // namespace adaqp
