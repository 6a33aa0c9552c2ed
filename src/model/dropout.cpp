#include "adaqp/model/dropout.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include <optional>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void check_matrix(const at::Tensor& t, const char* what) {
  ADAQP_CHECK(t.defined() && t.scalar_type() == at::kFloat && t.dim() == 2 && t.is_contiguous(),
              std::string(what) + " must be a contiguous float32 matrix, got " +
                  (t.defined() ? t.toString() + " " + std::to_string(t.dim()) + "-d" : "none"));
}

DropoutMask mask_of(const at::Tensor& bits, double scale) {
  return DropoutMask{bits, static_cast<float>(scale)};
}

std::optional<at::Tensor> optional(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}

// Rows of x masked again (a new tensor), for a weight gradient.
at::Tensor masked(const at::Tensor& x, const DropoutMask& mask, int64_t offset) {
  at::Tensor out = at::empty_like(x);
  kernels::apply_mask(tensor_device(x), x.data_ptr<float>(), x.size(0), x.size(1),
                      mask.view(offset),
                      /*relu=*/false, out.data_ptr<float>(), nullptr);
  return out;
}

struct ReluDropout : public torch::autograd::Function<ReluDropout> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& y,
                            const std::optional<at::Tensor>& bits_arg, double scale) {
    // Optional arguments, so that autograd takes absent tensors for no input.
    const at::Tensor bits = bits_arg.value_or(at::Tensor());
    check_matrix(y, "ReLU-dropout input");
    const int64_t n = y.size(0), d = y.size(1);
    at::Tensor positive = at::empty({n, kernels::bit_words(d)}, y.options().dtype(at::kInt));
    float* data = y.data_ptr<float>();
    kernels::apply_mask(tensor_device(y), data, n, d, mask_of(bits, scale).view(), /*relu=*/true,
                        data, reinterpret_cast<uint32_t*>(positive.data_ptr<int32_t>()));
    ctx->mark_dirty({y});
    ctx->save_for_backward({bits, positive});
    ctx->saved_data["scale"] = scale;
    return y;
  }

  // grad_outputs by reference: dy is taken out of the engine's list, and masked in place when
  // nothing else holds it (it was made for this operation alone by the next layer's backward).
  static variable_list backward(AutogradContext* ctx, variable_list& grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const DropoutMask mask = mask_of(saved[0], ctx->saved_data["scale"].toDouble());
    at::Tensor dy = std::move(grad_outputs[0]);
    const bool own = dy.is_contiguous() && dy.use_count() == 1 && dy.storage().use_count() == 1;
    if (!own) dy = dy.contiguous();
    at::Tensor dx = own ? dy : at::empty_like(dy);
    kernels::apply_mask_backward(
        tensor_device(dy), dy.data_ptr<float>(), dy.size(0), dy.size(1), mask.view(),
        reinterpret_cast<const uint32_t*>(saved[1].data_ptr<int32_t>()), dx.data_ptr<float>());
    return {dx, at::Tensor(), at::Tensor()};
  }
};

struct DropoutLinear : public torch::autograd::Function<DropoutLinear> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& z,
                            const std::optional<at::Tensor>& x_arg, const at::Tensor& bits,
                            double scale, const at::Tensor& weight, const at::Tensor& bias,
                            const std::optional<at::Tensor>& root_arg) {
    const at::Tensor x = x_arg.value_or(at::Tensor());
    const at::Tensor root = root_arg.value_or(at::Tensor());
    check_matrix(z, "layer input");
    const DropoutMask mask = mask_of(bits, scale);
    at::Tensor y = at::addmm(bias, masked(z, mask, 0), weight.t());  // what a Linear does
    if (root.defined()) {
      check_matrix(x, "root input");
      y.add_(at::mm(masked(x, mask, z.size(1)), root.t()));  // a Linear without bias
    }
    ctx->save_for_backward({z, x, bits});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["root"] = root.defined();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& z = saved[0];
    const at::Tensor& x = saved[1];
    const DropoutMask mask = mask_of(saved[2], ctx->saved_data["scale"].toDouble());
    const at::Tensor dy = grad_outputs[0];
    const at::Tensor d_weight = dy.t().mm(masked(z, mask, 0));
    const at::Tensor d_bias = dy.sum(0);
    at::Tensor d_root;
    if (ctx->saved_data["root"].toBool()) d_root = dy.t().mm(masked(x, mask, z.size(1)));
    return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), d_weight, d_bias, d_root};
  }
};

// z arrives as its tensors (kept in saved_data: constant, never modified), weight and bias as
// autograd inputs; the mask as entry bits.
struct SparseDropoutLinear : public torch::autograd::Function<SparseDropoutLinear> {
  static at::Tensor forward(AutogradContext* ctx, const SparseFeatures& z,
                            const std::optional<at::Tensor>& bits_arg, double scale,
                            const at::Tensor& weight, const std::optional<at::Tensor>& bias_arg) {
    const at::Tensor bits = bits_arg.value_or(at::Tensor());
    const at::Tensor bias = bias_arg.value_or(at::Tensor());
    ADAQP_CHECK(weight.dim() == 2 && weight.size(1) == z.cols,
                "a sparse layer input of " + std::to_string(z.cols) + " columns times a weight " +
                    weight.toString() + " of " + std::to_string(weight.size(-1)) + " columns");
    ADAQP_CHECK(!bias.defined() || bias.numel() == weight.size(0),
                "a sparse layer's bias of " + std::to_string(bias.numel()) + " values for " +
                    std::to_string(weight.size(0)) + " outputs");
    ADAQP_CHECK(!bits.defined() || bits.numel() == kernels::bit_words(z.nnz()),
                "entry bits of " + std::to_string(bits.numel()) + " words for " +
                    std::to_string(z.nnz()) + " entries");
    const at::Tensor weight_t = weight.t().contiguous();  // cols x out
    at::Tensor y = at::empty({z.rows, weight.size(0)}, weight.options());
    kernels::masked_spmm(tensor_device(weight), z.view(), keep_words(bits),
                         static_cast<float>(scale), /*entries=*/nullptr, weight_t.data_ptr<float>(),
                         weight.size(0), y.data_ptr<float>());
    if (bias.defined()) y.add_(bias);
    ctx->save_for_backward({bits});
    ctx->saved_data["bias"] = bias.defined();
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["rows"] = z.rows;
    ctx->saved_data["cols"] = z.cols;
    ctx->saved_data["values"] = z.values;
    ctx->saved_data["t_indptr"] = z.t_indptr;
    ctx->saved_data["t_rows"] = z.t_rows;
    ctx->saved_data["t_entries"] = z.t_entries;
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor bits = ctx->get_saved_variables()[0];
    const at::Tensor dy = grad_outputs[0].contiguous();
    const at::Tensor values = ctx->saved_data["values"].toTensor();
    const at::Tensor t_indptr = ctx->saved_data["t_indptr"].toTensor();
    const at::Tensor t_rows = ctx->saved_data["t_rows"].toTensor();
    const at::Tensor t_entries = ctx->saved_data["t_entries"].toTensor();
    const kernels::CsrView z_t{ctx->saved_data["cols"].toInt(), ctx->saved_data["rows"].toInt(),
                               t_indptr.data_ptr<int64_t>(), t_rows.data_ptr<int32_t>(),
                               values.data_ptr<float>()};
    at::Tensor d_weight_t = at::empty({z_t.rows, dy.size(1)}, dy.options());  // cols x out
    kernels::masked_spmm(tensor_device(dy), z_t, keep_words(bits),
                         static_cast<float>(ctx->saved_data["scale"].toDouble()),
                         t_entries.data_ptr<int32_t>(), dy.data_ptr<float>(), dy.size(1),
                         d_weight_t.data_ptr<float>());
    const at::Tensor d_bias = ctx->saved_data["bias"].toBool() ? dy.sum(0) : at::Tensor();
    return {at::Tensor(), at::Tensor(), at::Tensor(), d_weight_t.t(), d_bias};
  }

  static const uint32_t* keep_words(const at::Tensor& bits) {
    return bits.defined() ? reinterpret_cast<const uint32_t*>(bits.data_ptr<int32_t>()) : nullptr;
  }
};

}  // namespace

kernels::MaskView DropoutMask::view(int64_t offset) const {
  kernels::MaskView v;
  if (!bits.defined()) return v;
  v.bits = reinterpret_cast<const uint32_t*>(bits.data_ptr<int32_t>());
  v.words_per_row = bits.size(1);
  v.offset = offset;
  v.scale = scale;
  return v;
}

DropoutMask draw_dropout(const DropoutKey& key, float p, const at::Tensor& gids, int64_t width) {
  const int64_t n = gids.size(0);
  DropoutMask mask;
  mask.bits = at::empty({n, kernels::bit_words(width)}, gids.options().dtype(at::kInt));
  mask.scale = 1.0f / (1.0f - p);
  kernels::dropout_keep_bits(tensor_device(gids), key, p, gids.data_ptr<int64_t>(), n, width,
                             reinterpret_cast<uint32_t*>(mask.bits.data_ptr<int32_t>()));
  return mask;
}

DropoutMask draw_dropout(const DropoutDraw& drop, const at::Tensor& gids, int64_t width) {
  return drop.p > 0 ? draw_dropout(drop.key, drop.p, gids, width) : DropoutMask{};
}

DropoutMask draw_sparse_dropout(const DropoutDraw& drop, const SparseFeatures& z,
                                const at::Tensor& gids, int64_t offset) {
  DropoutMask mask;
  if (drop.p == 0) return mask;
  ADAQP_CHECK(gids.scalar_type() == at::kLong && gids.numel() == z.rows,
              "sparse dropout over " + std::to_string(z.rows) + " rows with global ids " +
                  gids.toString() + " of " + std::to_string(gids.numel()));
  mask.bits = at::empty({kernels::bit_words(z.nnz())}, gids.options().dtype(at::kInt));
  mask.scale = 1.0f / (1.0f - drop.p);
  kernels::sparse_keep_bits(tensor_device(gids), drop.key, drop.p, z.view(), z.nnz(),
                            gids.data_ptr<int64_t>(), offset,
                            reinterpret_cast<uint32_t*>(mask.bits.data_ptr<int32_t>()));
  return mask;
}

at::Tensor draw_edge_dropout(const EdgeDropout& drop, const at::Tensor& dst, const at::Tensor& src,
                             const at::Tensor& dst_gids, const at::Tensor& src_gids,
                             int64_t heads) {
  for (const at::Tensor* t : {&dst, &src, &dst_gids, &src_gids}) {
    ADAQP_CHECK(
        t->scalar_type() == at::kLong && t->is_contiguous(),
        "edge dropout needs contiguous int64 edge ends and global ids, got " + t->toString());
  }
  ADAQP_CHECK(src.device() == dst.device() && dst_gids.device() == dst.device() &&
                  src_gids.device() == dst.device(),
              "edge dropout needs its edge ends and global ids on one device");
  ADAQP_CHECK_EQ(dst.numel(), src.numel(), "edge dropout: destinations, sources");
  const int64_t edges = dst.numel();
  at::Tensor scale = at::empty({edges, heads}, dst.options().dtype(at::kFloat));
  kernels::edge_dropout_scale(tensor_device(dst), drop.key, drop.p, dst.data_ptr<int64_t>(),
                              src.data_ptr<int64_t>(), edges, dst_gids.data_ptr<int64_t>(),
                              src_gids.data_ptr<int64_t>(), heads, scale.data_ptr<float>());
  return scale;
}

at::Tensor relu_dropout_(const at::Tensor& y, const DropoutMask& mask) {
  return ReluDropout::apply(y, optional(mask.bits), static_cast<double>(mask.scale));
}

at::Tensor dropout_linear(const at::Tensor& z, const at::Tensor& x, const DropoutMask& mask,
                          const at::Tensor& weight, const at::Tensor& bias,
                          const at::Tensor& root) {
  return DropoutLinear::apply(z, optional(x), mask.bits, static_cast<double>(mask.scale), weight,
                              bias, optional(root));
}

at::Tensor sparse_dropout_linear(const SparseFeatures& z, const DropoutMask& mask,
                                 const at::Tensor& weight, const at::Tensor& bias) {
  return SparseDropoutLinear::apply(z, optional(mask.bits), static_cast<double>(mask.scale), weight,
                                    optional(bias));
}

}  // namespace adaqp
