// GAT's chunked weighted sum (model/edge_weighted_sum.h): against a dense float64 reference, and
// chunks of one edge, of 7 edges and of every edge giving the same bits forward and backward (the
// chunks after the first must take their own edges: a chunk offset dropped would go unseen where
// every graph of the tests fits in one chunk).
#include "adaqp/model/edge_weighted_sum.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace adaqp {
namespace {

struct Sum {
  at::Tensor y, dalpha, dz;
};

// The sum over edges (dst, src) of n destinations, sources from row `first` of z, taken
// `chunk_edges` edges at a time, with the gradients of sum(y * r).
Sum run(const at::Tensor& alpha0, const at::Tensor& z0, const at::Tensor& dst,
        const at::Tensor& src, int64_t n, int64_t first, const at::Tensor& r, int64_t chunk_edges) {
  const at::Tensor alpha = alpha0.clone().requires_grad_(true);
  const at::Tensor z = z0.clone().requires_grad_(true);
  const at::Tensor y =
      edge_weighted_sum(alpha, z, dst, src, n, first, chunk_edges * z.size(1) * z.size(2));
  (y * r).sum().backward();
  return {y.detach(), alpha.grad(), z.grad()};
}

TEST(EdgeWeightedSum, ChunksChangeNoValueAndMatchTheDenseSum) {
  torch::manual_seed(5);
  const int64_t n = 40, rows = 30, heads = 2, f = 3, edges = 301, first = 10;
  const at::Tensor dst = at::randint(n, {edges}, at::kLong);
  const at::Tensor src = at::randint(first, first + rows, {edges}, at::kLong);
  const at::Tensor alpha = at::rand({edges, heads});
  const at::Tensor z = at::randn({rows, heads, f});
  const at::Tensor r = at::randn({n, heads, f});

  const Sum whole = run(alpha, z, dst, src, n, first, r, edges);
  for (const int64_t chunk : {int64_t{1}, int64_t{7}, edges - 1}) {
    const Sum chunked = run(alpha, z, dst, src, n, first, r, chunk);
    EXPECT_TRUE(at::equal(chunked.y, whole.y)) << chunk << " edges a chunk";
    EXPECT_TRUE(at::equal(chunked.dalpha, whole.dalpha)) << chunk << " edges a chunk";
    EXPECT_TRUE(at::equal(chunked.dz, whole.dz)) << chunk << " edges a chunk";
  }

  // Dense: y = sum_e onehot(dst_e) alpha_e z_(src_e - first), in float64.
  const at::Tensor a = at::zeros({heads, n, rows}, at::kDouble);
  const at::Tensor alpha_d = alpha.to(at::kDouble);
  for (int64_t e = 0; e < edges; ++e) {
    const int64_t i = dst[e].item<int64_t>(), j = src[e].item<int64_t>() - first;
    for (int64_t k = 0; k < heads; ++k) a[k][i][j] += alpha_d[e][k];
  }
  const at::Tensor want = at::bmm(a, z.to(at::kDouble).permute({1, 0, 2})).permute({1, 0, 2});
  EXPECT_TRUE(at::allclose(whole.y.to(at::kDouble), want, 1e-5, 1e-6));
  // d/dz = A^T r; d/dalpha_e = <r_dst, z_src> per head.
  const at::Tensor want_dz =
      at::bmm(a.transpose(1, 2), r.to(at::kDouble).permute({1, 0, 2})).permute({1, 0, 2});
  EXPECT_TRUE(at::allclose(whole.dz.to(at::kDouble), want_dz, 1e-5, 1e-6));
  const at::Tensor want_dalpha =
      (r.to(at::kDouble).index_select(0, dst) * z.to(at::kDouble).index_select(0, src - first))
          .sum(-1);
  EXPECT_TRUE(at::allclose(whole.dalpha.to(at::kDouble), want_dalpha, 1e-5, 1e-6));
}

}  // namespace
}  // namespace adaqp
