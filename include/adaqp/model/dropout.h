// Dropout and ReLU in the model's autograd graph, keeping for backward only bits: the drawn mask
// (one bit per element, kernels/dropout.h) and ReLU's signs, instead of a float mask and the masked
// rows. The rows a weight gradient needs are made again from the bits in backward.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "adaqp/kernels/dropout.h"
#include "adaqp/model/sparse_features.h"

namespace adaqp {

// A drawn mask: keep bits of n rows (int32, n x kernels::bit_words(width), where the rows live)
// and the scale of kept elements. Undefined bits: nothing is dropped.
struct DropoutMask {
  at::Tensor bits;
  float scale = 1.0f;

  // Applying elements offset .. offset + d - 1 of each row.
  kernels::MaskView view(int64_t offset = 0) const;
};

// The mask of rows with global ids `gids` (int64, on the rows' device), `width` elements each,
// drawn with dropout probability p (0 <= p < 1).
DropoutMask draw_dropout(const DropoutKey& key, float p, const at::Tensor& gids, int64_t width);

// A dropout to draw in one forward pass: none when p is 0. Layer 0 draws its inputs' own
// (FeatureDropout: as wide as they are, or at A X's non-zeros only when it is kept sparse); a
// layer that weighs its edges drops edge weights (EdgeDropout: attention).
// Two types, so that a call cannot swap them.
struct DropoutDraw {
  DropoutKey key;
  float p = 0.0f;
};
struct FeatureDropout : DropoutDraw {};
struct EdgeDropout : DropoutDraw {};

// The mask of `drop` over rows with global ids `gids` of `width` elements (draw_dropout), or none
// when drop.p is 0.
DropoutMask draw_dropout(const DropoutDraw& drop, const at::Tensor& gids, int64_t width);

// The mask of `drop` at the entries of z (rows with global ids `gids`), z's column c being element
// offset + c of a node's mask row: entry bits (kernels::sparse_keep_bits, the elements
// draw_dropout would keep), or none when drop.p is 0.
DropoutMask draw_sparse_dropout(const DropoutDraw& drop, const SparseFeatures& z,
                                const at::Tensor& gids, int64_t offset);

// The scale of the edges dst[e] <- src[e] (int64 row indices, on the rows' device, into rows
// whose global node ids are dst_gids and src_gids) in `heads` heads: edges x heads float32,
// 1 / (1 - p) where kept, 0 where dropped (kernels::edge_dropout_scale: keyed by the edge's
// global ends). Requires p > 0.
at::Tensor draw_edge_dropout(const EdgeDropout& drop, const at::Tensor& dst, const at::Tensor& src,
                             const at::Tensor& dst_gids, const at::Tensor& src_gids, int64_t heads);

// y = ReLU(y) * mask, in place (y: a float32 matrix nobody else saved for backward); its backward
// reads the mask's bits and one bit per element for ReLU's sign.
at::Tensor relu_dropout_(const at::Tensor& y, const DropoutMask& mask);

// The layer over constant inputs (layer 0: z = A X and x = X need no gradient):
//   (z * mask[:, 0:d]) W^T + b [+ (x * mask[:, d:2d]) R^T when root (out x d) is defined]
// with d = z.size(1), equal to Linear(z * mask) [+ Linear_nobias(x * mask')]. Keeps the mask's bits
// only; backward masks z and x again for the weight gradients.
at::Tensor dropout_linear(const at::Tensor& z, const at::Tensor& x, const DropoutMask& mask,
                          const at::Tensor& weight, const at::Tensor& bias, const at::Tensor& root);

// A Linear over a sparse constant input (layer 0's A X or X kept sparse) with a mask from
// draw_sparse_dropout: (z * mask) W^T [+ b when bias is defined] by kernels::masked_spmm, z's
// non-zeros only; backward the weight gradient by z's transpose, masked the same way. Equal to the
// Linear over the dense z masked by draw_dropout's mask of the same draw, up to summation order.
at::Tensor sparse_dropout_linear(const SparseFeatures& z, const DropoutMask& mask,
                                 const at::Tensor& weight, const at::Tensor& bias);

}  // namespace adaqp
