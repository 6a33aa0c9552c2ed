#include "adaqp/kernels/dropout.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "adaqp/common/philox_rows.h"
#include "adaqp/common/vector_clones.h"
#include "adaqp/kernels/no_cuda.h"
#include "csr_row_product.h"

namespace adaqp::kernels {
namespace {

void check_probability(float p) {
  ADAQP_CHECK(p >= 0.0f && p < 1.0f, "dropout probability " + std::to_string(p));
}

// The entries of a row of masked_spmm's matrix (csr_row_product.h's Row) in walk order, each the
// masked entry as the dense path forms it (its value times scale), its value read through `order`
// when the walk is transposed. Dropped entries add nothing: only the set bits of `kept` are
// visited, a word at a time, so a random mask costs no mispredicted branch per entry. Kept entries
// of weight zero add nothing either.
struct MaskedEntries {
  // Walk positions j of [begin, end): with bits, each set bit of the words covering them, the
  // bits outside the range cleared.
  struct Cursor {
    const MaskedEntries& m;
    int64_t j, end;  // without bits: the next position
    int64_t base;    // with bits: the position of the current word's bit 0
    uint32_t word;   // its set bits not yet visited
    bool next(int64_t& column, float& weight) {
      for (;;) {
        int64_t at;
        if (m.kept == nullptr) {
          if (j == end) return false;
          at = j++;
        } else {
          while (word == 0) {
            base += 32;
            if (base >= end) return false;
            word = m.kept[base / 32] & below(end - base);
          }
          at = base + __builtin_ctz(word);
          word &= word - 1;
        }
        weight = m.walk.values[m.order != nullptr ? m.order[at] : at] * m.scale;
        if (weight == 0.0f) continue;
        column = m.walk.indices[at];
        return true;
      }
    }
  };

  const CsrView& walk;
  const int32_t* order;  // walk position -> stored entry; null when the walk is the stored order
  const uint32_t* kept;  // bit j: walk position j kept; null: every entry
  float scale;

  // The bits of a word below position n of it (all for n >= 32).
  static uint32_t below(int64_t n) { return n >= 32 ? ~0u : (1u << n) - 1u; }

  Cursor entries(int64_t begin, int64_t end) const {
    if (kept == nullptr || begin == end) return Cursor{*this, begin, end, end, 0u};
    const int64_t base = begin - begin % 32;
    return Cursor{*this, begin, end, base,
                  kept[base / 32] & ~below(begin - base) & below(end - base)};
  }
};

// Bits 32 * w .. 32 * w + 31 of a mask row (offset included): one word, or two straddled ones.
inline uint32_t mask_word(const MaskView& m, int64_t row, int64_t w) {
  const int64_t bit = m.offset + 32 * w;
  const uint32_t* words = m.bits + row * m.words_per_row + bit / 32;
  const int shift = static_cast<int>(bit % 32);
  if (shift == 0) return words[0];
  // Bits past the row's last word belong to no element of it.
  const uint32_t hi = bit / 32 + 1 < m.words_per_row ? words[1] : 0u;
  return (words[0] >> shift) | (hi << (32 - shift));
}

ADAQP_CLONED_BODY void keep_row_body(const DropoutKey& key, float p, uint64_t gid, int64_t width,
                                     uint32_t* words, uint32_t* keep) {
  philox_row_words(key.seed, key.epoch, key.layer, RngStream::kDropout, gid, (width + 3) / 4,
                   words);
  for (int64_t w = 0; w < bit_words(width); ++w) {
    const int64_t count = std::min<int64_t>(32, width - 32 * w);
    const uint32_t* u = words + 32 * w;
    uint32_t bits = 0;
    for (int64_t j = 0; j < count; ++j) {
      bits |= static_cast<uint32_t>(philox_uniform(u[j]) >= p) << j;
    }
    keep[w] = bits;
  }
}
ADAQP_VECTOR_CLONES(void, keep_row,
                    (const DropoutKey& key, float p, uint64_t gid, int64_t width, uint32_t* words,
                     uint32_t* keep),
                    (key, p, gid, width, words, keep))

// 32 elements of a row under one mask word (count of them valid), each a select and a multiply;
// with a constant count (a whole word) the loops vectorise.
template <bool kRelu>
inline uint32_t mask_word_elements(const float* in, int64_t count, uint32_t keep, float scale,
                                   float* out) {
  uint32_t pos = 0;
  for (int64_t j = 0; j < count; ++j) {
    float v = in[j];
    pos |= static_cast<uint32_t>(v > 0.0f) << j;
    if (kRelu) v = (v > 0.0f || v != v) ? v : 0.0f;
    out[j] = v * (((keep >> j) & 1u) != 0 ? scale : 0.0f);
  }
  return pos;
}

// dx = dy * (kept ? scale : 0) where positive, else +0. The zero is the product's bits cleared:
// a select after the multiply, which GCC (trapping math) moves into a branch and leaves scalar.
inline void mask_word_gradient(const float* dy, int64_t count, uint32_t keep, uint32_t pos,
                               float scale, float* dx) {
  for (int64_t j = 0; j < count; ++j) {
    const float v = dy[j] * (((keep >> j) & 1u) != 0 ? scale : 0.0f);
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits &= 0u - ((pos >> j) & 1u);
    std::memcpy(dx + j, &bits, sizeof bits);
  }
}

template <bool kRelu>
inline void mask_row_words(const float* x, int64_t d, const MaskView& m, int64_t row, float* out,
                           uint32_t* positive) {
  const int64_t whole = d / 32;
  for (int64_t w = 0; w < bit_words(d); ++w) {
    const uint32_t keep = m.bits != nullptr ? mask_word(m, row, w) : ~0u;
    const uint32_t pos =
        w < whole ? mask_word_elements<kRelu>(x + 32 * w, 32, keep, m.scale, out + 32 * w)
                  : mask_word_elements<kRelu>(x + 32 * w, d - 32 * w, keep, m.scale, out + 32 * w);
    if (positive != nullptr) positive[w] = pos;
  }
}

ADAQP_CLONED_BODY void mask_row_body(const float* x, int64_t d, const MaskView& m, int64_t row,
                                     bool relu, float* out, uint32_t* positive) {
  if (relu) {
    mask_row_words<true>(x, d, m, row, out, positive);
  } else {
    mask_row_words<false>(x, d, m, row, out, positive);
  }
}
ADAQP_VECTOR_CLONES(void, mask_row,
                    (const float* x, int64_t d, const MaskView& m, int64_t row, bool relu,
                     float* out, uint32_t* positive),
                    (x, d, m, row, relu, out, positive))

ADAQP_CLONED_BODY void mask_row_backward_body(const float* dy, int64_t d, const MaskView& m,
                                              int64_t row, const uint32_t* positive, float* dx) {
  const int64_t whole = d / 32;
  for (int64_t w = 0; w < bit_words(d); ++w) {
    const uint32_t keep = m.bits != nullptr ? mask_word(m, row, w) : ~0u;
    const uint32_t pos = positive != nullptr ? positive[w] : ~0u;
    if (w < whole) {
      mask_word_gradient(dy + 32 * w, 32, keep, pos, m.scale, dx + 32 * w);
    } else {
      mask_word_gradient(dy + 32 * w, d - 32 * w, keep, pos, m.scale, dx + 32 * w);
    }
  }
}
ADAQP_VECTOR_CLONES(void, mask_row_backward,
                    (const float* dy, int64_t d, const MaskView& m, int64_t row,
                     const uint32_t* positive, float* dx),
                    (dy, d, m, row, positive, dx))

constexpr int64_t kParallelElements = 65536;

}  // namespace

void dropout_keep_bits(const Device& device, const DropoutKey& key, float p, const int64_t* gids,
                       int64_t n, int64_t width, uint32_t* keep) {
  check_probability(p);
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    dropout_keep_bits_cuda(key, p, gids, n, width, keep);
    return;
#else
    no_cuda("dropout_keep_bits");
#endif
  }
  const int64_t words = bit_words(width);
#pragma omp parallel if (n * width > kParallelElements)
  {
    std::vector<uint32_t> u(static_cast<size_t>(philox_row_words_size((width + 3) / 4)));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      keep_row(key, p, static_cast<uint64_t>(gids[i]), width, u.data(), keep + i * words);
    }
  }
}

void edge_dropout_scale(const Device& device, const DropoutKey& key, float p, const int64_t* dst,
                        const int64_t* src, int64_t edges, const int64_t* dst_gids,
                        const int64_t* src_gids, int64_t heads, float* scale) {
  check_probability(p);
  ADAQP_CHECK(heads >= 1 && heads <= 1024, "edge dropout over " + std::to_string(heads) + " heads");
  ADAQP_CHECK_LT(key.epoch, 1u << 24, "edge dropout's epoch");
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    edge_dropout_scale_cuda(key, p, dst, src, edges, dst_gids, src_gids, heads, scale);
    return;
#else
    no_cuda("edge_dropout_scale");
#endif
  }
  const float kept = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (edges * heads > kParallelElements)
  for (int64_t e = 0; e < edges; ++e) {
    const auto g_dst = static_cast<uint64_t>(dst_gids[dst[e]]);
    const auto g_src = static_cast<uint64_t>(src_gids[src[e]]);
    for (int64_t k = 0; k < heads; k += 4) {
      const PhiloxWords r = philox_edge_block(key.seed, key.epoch, key.layer, g_dst, g_src,
                                              static_cast<uint32_t>(k / 4));
      for (int64_t j = 0; j < 4 && k + j < heads; ++j) {
        scale[e * heads + k + j] = philox_uniform(r.v[j]) >= p ? kept : 0.0f;
      }
    }
  }
}

void apply_mask(const Device& device, const float* x, int64_t n, int64_t d, const MaskView& mask,
                bool relu, float* out, uint32_t* positive) {
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    apply_mask_cuda(x, n, d, mask, relu, out, positive);
    return;
#else
    no_cuda("apply_mask");
#endif
  }
  const int64_t words = bit_words(d);
#pragma omp parallel for schedule(static) if (n * d > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    uint32_t* pos = positive != nullptr ? positive + i * words : nullptr;
    mask_row(x + i * d, d, mask, i, relu, out + i * d, pos);
  }
}

void apply_mask_backward(const Device& device, const float* dy, int64_t n, int64_t d,
                         const MaskView& mask, const uint32_t* positive, float* dx) {
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    apply_mask_backward_cuda(dy, n, d, mask, positive, dx);
    return;
#else
    no_cuda("apply_mask_backward");
#endif
  }
  const int64_t words = bit_words(d);
#pragma omp parallel for schedule(static) if (n * d > kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    mask_row_backward(dy + i * d, d, mask, i, positive != nullptr ? positive + i * words : nullptr,
                      dx + i * d);
  }
}

void sparse_keep_bits(const Device& device, const DropoutKey& key, float p, const CsrView& a,
                      int64_t nnz, const int64_t* gids, int64_t offset, uint32_t* keep) {
  check_probability(p);
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    sparse_keep_bits_cuda(key, p, a, nnz, gids, offset, keep);
    return;
#else
    no_cuda("sparse_keep_bits");
#endif
  }
  ADAQP_CHECK_EQ(nnz, a.rows > 0 ? a.indptr[a.rows] : 0,
                 "sparse_keep_bits: entries given, the matrix's entries");
  const int64_t words = bit_words(nnz);
  // Chunks of whole words, so that no two threads write one word; each finds its first row.
  constexpr int64_t kChunkWords = 256;
#pragma omp parallel for schedule(static) if (nnz > kParallelElements)
  for (int64_t w0 = 0; w0 < words; w0 += kChunkWords) {
    const int64_t k0 = 32 * w0, k1 = std::min(nnz, 32 * (w0 + kChunkWords));
    int64_t i = std::upper_bound(a.indptr, a.indptr + a.rows + 1, k0) - a.indptr - 1;
    // A word's entries: each one's node, the Philox block of its element of the node's mask row
    // (offset + column) and that element's word in the block.
    uint64_t node[32];
    uint32_t block[32], pick[32], u[32];
    for (int64_t kw = k0; kw < k1; kw += 32) {
      const int64_t n = std::min<int64_t>(32, k1 - kw);
      for (int64_t j = 0; j < n; ++j) {
        while (a.indptr[i + 1] <= kw + j) ++i;
        const int64_t c = offset + a.indices[kw + j];
        node[j] = static_cast<uint64_t>(gids[i]);
        block[j] = static_cast<uint32_t>(c / 4);
        pick[j] = static_cast<uint32_t>(c % 4);
      }
      philox_picked_words(key.seed, key.epoch, key.layer, RngStream::kDropout, node, block, pick, n,
                          u);
      uint32_t bits = 0;
      for (int64_t j = 0; j < n; ++j) bits |= static_cast<uint32_t>(philox_uniform(u[j]) >= p) << j;
      keep[kw / 32] = bits;
    }
  }
}

void masked_spmm(const Device& device, const CsrView& a, const uint32_t* keep, float scale,
                 const int32_t* entries, const float* x, int64_t d, float* y) {
  if (device.is_cuda()) {
#if ADAQP_WITH_CUDA
    masked_spmm_cuda(a, keep, scale, entries, x, d, y);
    return;
#else
    no_cuda("masked_spmm");
#endif
  }
  const int64_t nnz = a.rows > 0 ? a.indptr[a.rows] : 0;
  // The transposed walk visits the entries out of stored order: its bits, gathered once, in walk
  // order.
  std::vector<uint32_t> walk_bits;
  if (keep != nullptr && entries != nullptr) {
    walk_bits.resize(static_cast<size_t>(bit_words(nnz)));
#pragma omp parallel for schedule(static) if (nnz > kParallelElements)
    for (int64_t w = 0; w < bit_words(nnz); ++w) {
      uint32_t bits = 0;
      for (int64_t b = 0; b < std::min<int64_t>(32, nnz - 32 * w); ++b) {
        const int64_t k = entries[32 * w + b];
        bits |= ((keep[k / 32] >> (k % 32)) & 1u) << b;
      }
      walk_bits[static_cast<size_t>(w)] = bits;
    }
  }
  const MaskedEntries masked{a, entries, entries != nullptr ? walk_bits.data() : keep, scale};
#pragma omp parallel for schedule(dynamic, 64) if (nnz * d > kParallelElements)
  for (int64_t i = 0; i < a.rows; ++i) {
    detail::best_row_product(masked, a.indptr[i], a.indptr[i + 1], x, d, y + i * d,
                             /*accumulate=*/false);
  }
}

}  // namespace adaqp::kernels
