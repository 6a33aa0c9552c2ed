#include "adaqp/model/edge_weighted_sum.h"

#include <torch/autograd.h>

#include <algorithm>

namespace adaqp {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

int64_t chunk_edges(const at::Tensor& z, int64_t chunk_floats) {
  return std::max<int64_t>(1, chunk_floats / std::max<int64_t>(z.size(1) * z.size(2), 1));
}

// The rows of z that sources b .. b + c - 1 name.
at::Tensor rows_of(const at::Tensor& src, int64_t b, int64_t c, int64_t first) {
  const at::Tensor s = src.narrow(0, b, c);
  return first == 0 ? s : s - first;
}

struct EdgeWeightedSum : public torch::autograd::Function<EdgeWeightedSum> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& alpha, const at::Tensor& z,
                            const at::Tensor& dst, const at::Tensor& src, int64_t n, int64_t first,
                            int64_t chunk_floats) {
    const int64_t edges = dst.size(0), chunk = chunk_edges(z, chunk_floats);
    at::Tensor y = at::zeros({n, z.size(1), z.size(2)}, z.options());
    for (int64_t b = 0; b < edges; b += chunk) {
      const int64_t c = std::min(chunk, edges - b);
      y.index_add_(
          0, dst.narrow(0, b, c),
          z.index_select(0, rows_of(src, b, c, first)).mul_(alpha.narrow(0, b, c).unsqueeze(-1)));
    }
    ctx->save_for_backward({alpha, z, dst, src});
    ctx->saved_data["first"] = first;
    ctx->saved_data["chunk_floats"] = chunk_floats;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &alpha = saved[0], &z = saved[1], &dst = saved[2], &src = saved[3];
    const int64_t first = ctx->saved_data["first"].toInt();
    const at::Tensor dy = grad_outputs[0].contiguous();
    const int64_t edges = dst.size(0);
    const int64_t chunk = chunk_edges(z, ctx->saved_data["chunk_floats"].toInt());
    at::Tensor dz = at::zeros_like(z);
    at::Tensor dalpha = at::empty_like(alpha);
    for (int64_t b = 0; b < edges; b += chunk) {
      const int64_t c = std::min(chunk, edges - b);
      const at::Tensor s = rows_of(src, b, c, first);
      at::Tensor g = dy.index_select(0, dst.narrow(0, b, c));
      dalpha.narrow(0, b, c).copy_((g * z.index_select(0, s)).sum(-1));
      dz.index_add_(0, s, g.mul_(alpha.narrow(0, b, c).unsqueeze(-1)));
    }
    return {dalpha, dz, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor edge_weighted_sum(const at::Tensor& alpha, const at::Tensor& z, const at::Tensor& dst,
                             const at::Tensor& src, int64_t n, int64_t first,
                             int64_t chunk_floats) {
  return EdgeWeightedSum::apply(alpha, z, dst, src, n, first, chunk_floats);
}

}  // namespace adaqp
