// Dropout kept as bits: the masks are drawn once into one bit per element, applied (optionally
// after a ReLU, whose signs are recorded as bits too) and applied again in backward, so that a
// layer keeps 2 bits per element for backward instead of a float mask and the masked rows.
//
// Masks are keyed by global node id: the mask of a node's row depends only on (seed, epoch, layer,
// global id, element), never on which worker owns the node or where its row sits, so training on W
// workers draws exactly the masks of single-worker training. Element e of node g is dropped when
// philox_uniform(word e % 4 of philox_block(seed, epoch, layer, kDropout, g, e / 4)) < p.
//
// Bit matrices: one row per node of bit_words(width) 32-bit words; bit e of a row is bit e % 32 of
// word e / 32. Every entry point takes the device its pointers live on (`device`): the CPU kernels
// are in src/kernels/dropout.cpp, their CUDA twins in cuda/dropout.cu (enqueued on the legacy
// default stream, libtorch's compute stream); a build without CUDA refuses a CUDA device.
#pragma once

#include <cstdint>

#include "adaqp/common/device.h"
#include "adaqp/config.h"
#include "adaqp/kernels/spmm.h"

namespace adaqp {

struct DropoutKey {
  uint64_t seed = 0;
  uint32_t epoch = 0;
  uint32_t layer = 0;
};

namespace kernels {

constexpr int64_t bit_words(int64_t width) {
  return (width + 31) / 32;
}

// A drawn mask as its rows are applied: element e of row i is kept when bit offset + e of row i of
// `bits` (words_per_row words each) is set, and then scaled by `scale` (1 / (1 - p)); a dropped
// element is multiplied by 0. bits == nullptr keeps every element with scale 1 (no dropout).
struct MaskView {
  const uint32_t* bits = nullptr;
  int64_t words_per_row = 0;
  int64_t offset = 0;
  float scale = 1.0f;
};

// keep (n x bit_words(width) words): bit e of row i set when element e of node gids[i] is kept.
// Requires 0 <= p < 1.
void dropout_keep_bits(const Device& device, const DropoutKey& key, float p, const int64_t* gids,
                       int64_t n, int64_t width, uint32_t* keep);

// out = f(x) * mask for n x d rows, f = ReLU when `relu` (which then records bit e of row i of
// `positive`, n x bit_words(d) words, as x > 0; `positive` may be null), else the identity. out
// may be x (in place). A ReLU keeps NaN.
void apply_mask(const Device& device, const float* x, int64_t n, int64_t d, const MaskView& mask,
                bool relu, float* out, uint32_t* positive);

// The gradient of apply_mask: dx = dy * mask where bit e of row i of `positive` is set, 0
// elsewhere; positive == nullptr: dx = dy * mask everywhere. dx may be dy.
void apply_mask_backward(const Device& device, const float* dy, int64_t n, int64_t d,
                         const MaskView& mask, const uint32_t* positive, float* dx);

// Dropout of a sparse matrix's entries, drawn at its entries only: keep (bit_words(nnz) words)
// gets bit k set when entry k of `a` (CSR order; row i, column c) is kept, that is when element
// offset + c of node gids[i] is kept by the definition above: the mask dropout_keep_bits would
// draw for the dense rows (elements offset .. offset + a.cols - 1 of them), at the non-zeros. nnz:
// a's entries (a.indptr[a.rows], given so that a GPU need not read it back). Requires 0 <= p < 1.
void sparse_keep_bits(const Device& device, const DropoutKey& key, float p, const CsrView& a,
                      int64_t nnz, const int64_t* gids, int64_t offset, uint32_t* keep);

// y = (a * mask) x over a sparse a's entries (a.rows x a.cols, CSR): entry k counts as
// a.values[k] * scale when bit k of `keep` is set and adds nothing when not (keep null: every entry
// kept; pass scale 1), as in the dense product when a's values are finite (sparsify keeps a matrix
// with a non-finite value dense). With `entries`, a walks the entries of another matrix B in
// another order (B's transpose): row i's j-th entry (column a.indices[j]) is B's entry entries[j],
// whose value a.values and whose bit `keep` hold. x is a.cols x d, y a.rows x d (overwritten),
// row-major. Each row of y sums its entries in stored order. Layer 0 over a sparse A X
// (model/sparse_features.h).
void masked_spmm(const Device& device, const CsrView& a, const uint32_t* keep, float scale,
                 const int32_t* entries, const float* x, int64_t d, float* y);

// Dropout of edge weights (attention): scale (edges x heads, row-major) gets 1 / (1 - p) where
// head k of edge e is kept and 0 where it is dropped. Edge e runs from global node
// src_gids[src[e]] to global node dst_gids[dst[e]]; head k of the edge from g_src to g_dst is
// dropped when philox_uniform(word k % 4 of philox_edge_block(seed, epoch, layer, g_dst, g_src,
// k / 4)) < p. So the mask depends on the edge's ends, not on the partition (parallel edges
// between two nodes share it). Requires 0 <= p < 1, heads <= 1024, epoch < 2^24.
void edge_dropout_scale(const Device& device, const DropoutKey& key, float p, const int64_t* dst,
                        const int64_t* src, int64_t edges, const int64_t* dst_gids,
                        const int64_t* src_gids, int64_t heads, float* scale);

#if ADAQP_WITH_CUDA
void edge_dropout_scale_cuda(const DropoutKey& key, float p, const int64_t* dst, const int64_t* src,
                             int64_t edges, const int64_t* dst_gids, const int64_t* src_gids,
                             int64_t heads, float* scale);
void dropout_keep_bits_cuda(const DropoutKey& key, float p, const int64_t* gids, int64_t n,
                            int64_t width, uint32_t* keep);
void apply_mask_cuda(const float* x, int64_t n, int64_t d, const MaskView& mask, bool relu,
                     float* out, uint32_t* positive);
void sparse_keep_bits_cuda(const DropoutKey& key, float p, const CsrView& a, int64_t nnz,
                           const int64_t* gids, int64_t offset, uint32_t* keep);
void masked_spmm_cuda(const CsrView& a, const uint32_t* keep, float scale, const int32_t* entries,
                      const float* x, int64_t d, float* y);
void apply_mask_backward_cuda(const float* dy, int64_t n, int64_t d, const MaskView& mask,
                              const uint32_t* positive, float* dx);
#endif

}  // namespace kernels
}  // namespace adaqp
