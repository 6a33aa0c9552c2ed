// The device path's kernels against the CPU path: the per-row block layout the CUDA codec uses
// places every row where the CPU codec's groups do (checked without a GPU), and on a GPU the CUDA
// block codec and dropout kernels are bit-identical to the CPU ones and scatter-add matches. The
// GPU cases skip, with the reason, without CUDA or a device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/config.h"
#include "adaqp/kernels/dropout.h"
#include "adaqp/kernels/gather.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/sparse_features.h"
#include "adaqp/quant/block_codec.h"
#if ADAQP_WITH_CUDA
#include "adaqp/kernels/cuda_device.h"
#include "cuda_skip.h"
#endif

namespace adaqp {
namespace {

// Every message width: 2, 4, 8 bits and full precision.
std::vector<uint8_t> random_widths(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> bits(static_cast<size_t>(n));
  for (uint8_t& b : bits) {
    b = static_cast<uint8_t>(
        quant::message_width(static_cast<int>(gen() % quant::kNumMessageWidths)));
  }
  return bits;
}

std::vector<float> random_rows(int64_t n, int64_t d, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(static_cast<size_t>(n * d));
  for (float& v : x) v = dist(gen);
  return x;
}

TEST(BlockCodec, RowSlotsPlaceEveryRowWhereTheGroupLayoutDoes) {
  for (int64_t d : {1, 3, 8, 33, 128}) {
    for (int64_t n : {0, 1, 5, 64, 301}) {
      const std::vector<uint8_t> bits = random_widths(n, static_cast<uint32_t>(n * 7 + d));
      const quant::BlockLayout layout(bits.data(), n, d);
      std::vector<int32_t> slot(static_cast<size_t>(n));
      quant::BlockCounts counts;
      quant::block_slots(bits.data(), n, slot.data(), &counts);
      ASSERT_EQ(quant::block_bytes(counts, d), layout.bytes()) << "d " << d << " n " << n;
      // Both against the format's definition: slots order rows by width, then by position.
      for (int64_t k = 0; k < n; ++k) {
        const int w = quant::message_width_index(bits[k]);
        int64_t before = 0;
        for (int64_t j = 0; j < n; ++j) {
          const int wj = quant::message_width_index(bits[j]);
          before += wj < w || (wj == w && j < k) ? 1 : 0;
        }
        ASSERT_EQ(slot[k], before) << "row " << k << " of " << n;
      }
      int64_t grouped = 0;
      for (const quant::BlockLayout::Group& g : layout.groups()) {
        ASSERT_TRUE(std::is_sorted(g.rows.begin(), g.rows.end()));
        for (const int64_t k : g.rows) ASSERT_EQ(bits[k], g.bits) << "row " << k;
        grouped += static_cast<int64_t>(g.rows.size());
      }
      ASSERT_EQ(grouped, n);
      for (const quant::BlockLayout::Group& g : layout.groups()) {
        for (size_t j = 0; j < g.rows.size(); ++j) {
          const int64_t k = g.rows[j];
          const quant::RowPlace at = quant::row_place(g.bits, slot[k], counts, d);
          const bool full = g.bits == quant::kFullPrecisionBits;
          if (!full) {
            ASSERT_EQ(at.meta, g.meta_offset + static_cast<int64_t>(j) * 8) << "row " << k;
          }
          const int64_t stride =
              full ? quant::full_precision_bytes(d) : quant::packed_row_bytes(d, g.bits);
          ASSERT_EQ(at.code, g.code_offset + static_cast<int64_t>(j) * stride) << "row " << k;
        }
      }
    }
  }
  for (const uint8_t wrong : {3, 16, 0, 255}) {
    const uint8_t bad[2] = {32, wrong};
    int32_t slot[2];
    quant::BlockCounts counts;
    EXPECT_THROW(quant::block_slots(bad, 2, slot, &counts), InvariantError) << int{wrong};
    EXPECT_THROW(quant::BlockLayout(bad, 2, 5), InvariantError) << int{wrong};
    try {
      quant::BlockLayout(bad, 2, 5);
    } catch (const InvariantError& e) {
      EXPECT_NE(std::string(e.what()).find("at row 1: " + std::to_string(wrong) + " is not"),
                std::string::npos)
          << e.what();
    }
  }
}

// Full-precision rows in a block beside quantized ones: they come first, as their float32 bytes,
// and come back bit for bit; the block is exactly the sum of its messages' sizes; every row's range
// is traced.
TEST(BlockCodec, FullPrecisionRowsTravelExactlyBesideQuantizedOnes) {
  const quant::QuantKey key{5, 1, 0, RngStream::kQuantBackward};
  for (int64_t d : {1, 3, 64}) {
    const int64_t n = 200;
    const std::vector<float> src = random_rows(n, d, static_cast<uint32_t>(d));
    std::vector<int64_t> gids(static_cast<size_t>(n));
    std::iota(gids.begin(), gids.end(), int64_t{10});
    const std::vector<uint8_t> bits = random_widths(n, static_cast<uint32_t>(d + 1));
    const quant::BlockLayout layout(bits.data(), n, d);
    int64_t expected = 0, full_rows = 0;
    for (uint8_t b : bits) {
      expected += quant::message_bytes(d, b);
      full_rows += b == quant::kFullPrecisionBits ? 1 : 0;
    }
    ASSERT_GT(full_rows, 0);
    ASSERT_LT(full_rows, n);
    ASSERT_EQ(layout.bytes(), expected);
    std::vector<uint8_t> block(static_cast<size_t>(layout.bytes()));
    std::vector<float> ranges(static_cast<size_t>(n), -1.0f);
    quant::encode_block(layout, src.data(), d, nullptr, gids.data(), key, block.data(),
                        ranges.data());
    std::vector<float> out(static_cast<size_t>(n * d), -7.0f);
    quant::decode_block(layout, block.data(), d, out.data());
    int64_t seen = 0;
    for (int64_t k = 0; k < n; ++k) {
      const float* x = src.data() + k * d;
      const auto [lo, hi] = std::minmax_element(x, x + d);
      EXPECT_EQ(ranges[k], *hi - *lo) << "row " << k;
      if (bits[k] != quant::kFullPrecisionBits) {
        for (int64_t e = 0; e < d; ++e) {
          ASSERT_LE(std::abs(out[k * d + e] - x[e]), (*hi - *lo) / 3 * 1.0001f) << "row " << k;
        }
        continue;
      }
      ASSERT_EQ(std::memcmp(out.data() + k * d, x, sizeof(float) * d), 0) << "row " << k;
      ASSERT_EQ(std::memcmp(block.data() + seen * d * sizeof(float), x, sizeof(float) * d), 0)
          << "full-precision row " << k << " is not the block's " << seen << "th row";
      ++seen;
    }
  }
}

TEST(BlockCodec, NonFiniteFullPrecisionRowIsAnError) {
  const int64_t n = 6, d = 4;
  std::vector<float> src = random_rows(n, d, 9);
  src[4 * d + 1] = std::numeric_limits<float>::infinity();
  const std::vector<int64_t> gids = {0, 1, 2, 3, 44, 5};
  const std::vector<uint8_t> bits = {8, 32, 2, 32, 32, 4};
  const quant::BlockLayout layout(bits.data(), n, d);
  std::vector<uint8_t> block(static_cast<size_t>(layout.bytes()));
  try {
    quant::encode_block(layout, src.data(), d, nullptr, gids.data(), quant::QuantKey{},
                        block.data(), nullptr);
    FAIL() << "no error for an infinite value";
  } catch (const quant::NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("node 44"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("element 1"), std::string::npos) << e.what();
  }
}

// A layout's groups are the widths its rows use, none empty, narrowest first and full precision
// last: the full-precision rows start the block, then the metadata, then the codes.
TEST(BlockCodec, LayoutGroupsAreTheWidthsInUse) {
  const std::vector<uint8_t> bits = {4, 4, 32, 4};
  const int64_t d = 7;
  const quant::BlockLayout layout(bits.data(), 4, d);
  ASSERT_EQ(layout.groups().size(), 2u);
  const quant::BlockLayout::Group& q = layout.groups()[0];
  const quant::BlockLayout::Group& f = layout.groups()[1];
  EXPECT_EQ(q.bits, 4);
  EXPECT_EQ(q.rows, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(f.bits, quant::kFullPrecisionBits);
  EXPECT_EQ(f.rows, (std::vector<int64_t>{2}));
  EXPECT_EQ(f.code_offset, 0);
  EXPECT_EQ(q.meta_offset, 4 * d);
  EXPECT_EQ(q.code_offset, 4 * d + 3 * 8);
  EXPECT_EQ(layout.bytes(), 4 * d + 3 * 8 + 3 * 4);
  EXPECT_EQ(layout.rows(), 4);
}

TEST(ScatterAddRows, AddsEachRowIntoItsTargetOnce) {
  const int64_t d = 5;
  std::vector<float> dst(6 * d, 1.0f);
  const std::vector<float> src = random_rows(3, d, 3);
  const std::vector<int64_t> idx = {4, 0, 2};
  kernels::scatter_add_rows(Device::cpu(), src.data(), d, idx.data(), 3, dst.data());
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t c = 0; c < d; ++c) {
      float want = 1.0f;
      for (int k = 0; k < 3; ++k) {
        if (idx[k] == r) want += src[k * d + c];
      }
      ASSERT_EQ(dst[r * d + c], want) << r << " " << c;
    }
  }
}

#if ADAQP_WITH_CUDA

template <typename T>
at::Tensor on_gpu(const std::vector<T>& host, at::ScalarType type) {
  return at::from_blob(const_cast<T*>(host.data()), {static_cast<int64_t>(host.size())},
                       at::TensorOptions().dtype(type))
      .to(at::kCUDA);
}

template <typename T>
std::vector<T> to_host(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU).contiguous();
  std::vector<T> v(static_cast<size_t>(c.numel()));
  std::memcpy(v.data(), c.data_ptr(), v.size() * sizeof(T));
  return v;
}

TEST(BlockCodecCuda, BitIdenticalToTheCpuCodec) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const quant::QuantKey key{77, 5, 2, RngStream::kQuantForward};
  // Rows of every lane count of the encoder (G = 1, 1, 2, 4, 4, 4, 8, 16, 16, 32 lanes a row, the
  // smallest power of two covering its 16-element blocks); d = 48: one block after the CPU's
  // vector group; 600: lanes that wrap past 32 blocks.
  for (int64_t d : {1, 7, 20, 47, 48, 64, 100, 129, 256, 600}) {
    // 17,000,000 rows of d = 1: more than one grid of either kernel covers (65,535 blocks of 256
    // rows, or of 256 four-element groups).
    for (int64_t n : {1, 40, 1000, 600000, 17000000}) {
      if ((n > 1000 && d > 7) || (n > 600000 && d > 1)) continue;
      const int64_t rows = n + 5;
      std::vector<float> src = random_rows(rows, d, static_cast<uint32_t>(d + n));
      for (int64_t e = 0; e < d; ++e) src[e] = 0.25f;  // a constant row
      for (int64_t e = 0; e < d; ++e)
        src[3 * d + e] *= 1.0e-39f;  // subnormal step: r = 0, sent as k = 1
      // Rows the lanes' min/max reduction orders by key (the rows sent are those of multiples of
      // 3): zeros of both signs (-0 is the minimum), and every value negative (so is the maximum).
      if (rows > 9) {
        for (int64_t e = 0; e < d; ++e) src[6 * d + e] = e % 2 == 0 ? -0.0f : 0.0f;
        for (int64_t e = 0; e < d; ++e) src[9 * d + e] = -std::fabs(src[9 * d + e]) - 0.5f;
      }
      std::vector<int64_t> src_rows(static_cast<size_t>(n)), gids(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) src_rows[k] = (k * 3) % rows, gids[k] = 500 + 7 * k;
      const std::vector<uint8_t> bits = random_widths(n, static_cast<uint32_t>(d * 3 + n));
      const quant::BlockLayout layout(bits.data(), n, d);
      // Outputs start from the same filler on both devices, not zeros: a byte, range or value the
      // CPU writes and a kernel leaves out differs even where the CPU's is 0.
      constexpr uint8_t kFillByte = 0xA5;
      constexpr float kFillValue = -7.0f;
      std::vector<uint8_t> cpu(static_cast<size_t>(layout.bytes()), kFillByte);
      std::vector<float> cpu_ranges(static_cast<size_t>(n), kFillValue);
      quant::encode_block(layout, src.data(), d, src_rows.data(), gids.data(), key, cpu.data(),
                          cpu_ranges.data());
      std::vector<float> cpu_rows(static_cast<size_t>(n * d), kFillValue);
      quant::decode_block(layout, cpu.data(), d, cpu_rows.data());

      std::vector<int32_t> slot(static_cast<size_t>(n));
      quant::BlockCounts counts;
      quant::block_slots(bits.data(), n, slot.data(), &counts);
      const at::Tensor d_src = on_gpu(src, at::kFloat), d_rows = on_gpu(src_rows, at::kLong),
                       d_gids = on_gpu(gids, at::kLong), d_bits = on_gpu(bits, at::kByte),
                       d_slot = on_gpu(slot, at::kInt);
      at::Tensor out = at::full({layout.bytes()}, kFillByte,
                                at::TensorOptions().dtype(at::kByte).device(at::kCUDA));
      at::Tensor ranges = at::full({n}, kFillValue, at::TensorOptions().device(at::kCUDA));
      at::Tensor status = at::full({1}, -1, at::TensorOptions().dtype(at::kLong).device(at::kCUDA));
      quant::encode_block_cuda(
          d_bits.data_ptr<uint8_t>(), d_slot.data_ptr<int32_t>(), counts, d_src.data_ptr<float>(),
          d, d_rows.data_ptr<int64_t>(), d_gids.data_ptr<int64_t>(), key, out.data_ptr<uint8_t>(),
          ranges.data_ptr<float>(),
          reinterpret_cast<unsigned long long*>(status.data_ptr<int64_t>()), nullptr);
      ASSERT_EQ(status.item<int64_t>(), -1) << "a finite row was reported unquantizable";
      ASSERT_EQ(to_host<uint8_t>(out), cpu) << "d " << d << " n " << n;
      ASSERT_EQ(to_host<float>(ranges), cpu_ranges);
      at::Tensor rows_out = at::full({n, d}, kFillValue, at::TensorOptions().device(at::kCUDA));
      quant::decode_block_cuda(d_bits.data_ptr<uint8_t>(), d_slot.data_ptr<int32_t>(), counts,
                               out.data_ptr<uint8_t>(), d, rows_out.data_ptr<float>(), nullptr);
      ASSERT_EQ(to_host<float>(rows_out.reshape({-1})), cpu_rows);
    }
  }
}

// The lowest global id of the rows the encoder met NaN or Inf in; -1 if none.
int64_t unquantizable_gid(const std::vector<float>& src, int64_t n, int64_t d) {
  std::vector<int64_t> gids(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) gids[k] = 1000 - k;  // later rows have lower ids
  // Rows 2, 5, ... travel at full precision, the others quantized: both are checked.
  std::vector<uint8_t> bits(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) bits[k] = k % 3 == 2 ? quant::kFullPrecisionBits : 4;
  std::vector<int32_t> slot(static_cast<size_t>(n));
  quant::BlockCounts counts;
  quant::block_slots(bits.data(), n, slot.data(), &counts);
  const at::Tensor d_src = on_gpu(src, at::kFloat), d_gids = on_gpu(gids, at::kLong),
                   d_bits = on_gpu(bits, at::kByte), d_slot = on_gpu(slot, at::kInt);
  at::Tensor out = at::zeros({quant::block_bytes(counts, d)},
                             at::TensorOptions().dtype(at::kByte).device(at::kCUDA));
  at::Tensor status = at::full({1}, -1, at::TensorOptions().dtype(at::kLong).device(at::kCUDA));
  quant::encode_block_cuda(
      d_bits.data_ptr<uint8_t>(), d_slot.data_ptr<int32_t>(), counts, d_src.data_ptr<float>(), d,
      nullptr, d_gids.data_ptr<int64_t>(), quant::QuantKey{}, out.data_ptr<uint8_t>(), nullptr,
      reinterpret_cast<unsigned long long*>(status.data_ptr<int64_t>()), nullptr);
  return status.item<int64_t>();
}

TEST(BlockCodecCuda, UnquantizableRowIsReportedByGlobalId) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const int64_t n = 20;
  // d = 9: one lane a row; 100, 256, 600: 8, 16 and 32 lanes, the NaN in the row's last lane, so
  // only the lanes' reduction of the special flag finds it.
  for (int64_t d : {9, 100, 256, 600}) {
    std::vector<float> src = random_rows(n, d, 4);
    src[13 * d + d - 1] = std::numeric_limits<float>::quiet_NaN();  // row 13: quantized
    EXPECT_EQ(unquantizable_gid(src, n, d), 1000 - 13) << "d " << d;
    src[17 * d + d / 2] = std::numeric_limits<float>::infinity();  // row 17: full precision
    EXPECT_EQ(unquantizable_gid(src, n, d), 1000 - 17) << "d " << d << ": the lower id";
  }
}

// Keep bits, masked rows (with and without ReLU, at an offset into wider mask rows) and their
// gradients on the GPU, bit for bit against the CPU kernels.
TEST(DropoutCuda, SameBitsRowsAndGradientsAsTheCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const Device cpu = Device::cpu(), gpu = Device::cuda(0);
  for (float p : {0.0f, 0.1f, 0.5f, 0.9f}) {
    for (int64_t d : {1, 4, 19, 33, 256}) {
      const int64_t n = 777, offset = d == 33 ? 7 : 0, width = offset + d;
      const int64_t words = kernels::bit_words(width);
      std::vector<int64_t> gids(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) gids[i] = (i * 7919) % 100003;
      const DropoutKey key{123, 9, 2};
      std::vector<uint32_t> bits(static_cast<size_t>(n * words));
      kernels::dropout_keep_bits(cpu, key, p, gids.data(), n, width, bits.data());
      const at::Tensor d_gids = on_gpu(gids, at::kLong);
      at::Tensor d_bits =
          at::empty({n * words}, at::TensorOptions().device(at::kCUDA).dtype(at::kInt));
      auto* d_bits_ptr = reinterpret_cast<uint32_t*>(d_bits.data_ptr<int32_t>());
      kernels::dropout_keep_bits(gpu, key, p, d_gids.data_ptr<int64_t>(), n, width, d_bits_ptr);
      const std::vector<int32_t> gpu_bits = to_host<int32_t>(d_bits);
      ASSERT_EQ(std::memcmp(gpu_bits.data(), bits.data(), bits.size() * 4), 0)
          << "p " << p << " d " << d;

      const float scale = 1.0f / (1.0f - p);
      const kernels::MaskView mask{bits.data(), words, offset, scale};
      const kernels::MaskView d_mask{d_bits_ptr, words, offset, scale};
      const std::vector<float> x = random_rows(n, d, 5), dy = random_rows(n, d, 6);
      for (bool relu : {false, true}) {
        std::vector<float> out(x.size()), dx(x.size());
        std::vector<uint32_t> pos(static_cast<size_t>(n * kernels::bit_words(d)));
        kernels::apply_mask(cpu, x.data(), n, d, mask, relu, out.data(), pos.data());
        kernels::apply_mask_backward(cpu, dy.data(), n, d, mask, relu ? pos.data() : nullptr,
                                     dx.data());
        at::Tensor d_x = on_gpu(x, at::kFloat), d_dy = on_gpu(dy, at::kFloat);
        at::Tensor d_pos = at::empty({static_cast<int64_t>(pos.size())},
                                     at::TensorOptions().device(at::kCUDA).dtype(at::kInt));
        auto* d_pos_ptr = reinterpret_cast<uint32_t*>(d_pos.data_ptr<int32_t>());
        // In place, as the model applies it.
        kernels::apply_mask(gpu, d_x.data_ptr<float>(), n, d, d_mask, relu, d_x.data_ptr<float>(),
                            d_pos_ptr);
        kernels::apply_mask_backward(gpu, d_dy.data_ptr<float>(), n, d, d_mask,
                                     relu ? d_pos_ptr : nullptr, d_dy.data_ptr<float>());
        ASSERT_EQ(to_host<float>(d_x), out) << "p " << p << " d " << d << " relu " << relu;
        ASSERT_EQ(to_host<float>(d_dy), dx) << "p " << p << " d " << d << " relu " << relu;
        const std::vector<int32_t> gpu_pos = to_host<int32_t>(d_pos);
        ASSERT_EQ(std::memcmp(gpu_pos.data(), pos.data(), pos.size() * 4), 0);
      }
    }
  }
}

// Edge dropout scales on the GPU, bit for bit against the CPU kernel (1 head, 2 whole blocks of 4,
// a partial block), over more threads than one grid holds (65,535 x 256: 6M edges x 3 blocks).
TEST(DropoutCuda, EdgeScalesMatchTheCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const int64_t rows = 100003;
  std::vector<int64_t> gids(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) gids[i] = (i * 7919) % 1000003 + (int64_t{1} << 33);
  for (const int64_t edges : {int64_t{1000}, int64_t{6000000}}) {
    std::vector<int64_t> dst(static_cast<size_t>(edges)), src(dst.size());
    for (int64_t e = 0; e < edges; ++e) {
      dst[e] = e % (rows - 1);  // into gids from its second entry on
      src[e] = (e * 31 + 7) % rows;
    }
    for (const int64_t heads : {1, 8, 9}) {
      const DropoutKey key{77, 4, 1};
      std::vector<float> cpu(static_cast<size_t>(edges * heads));
      kernels::edge_dropout_scale(Device::cpu(), key, 0.6f, dst.data(), src.data(), edges,
                                  gids.data() + 1, gids.data(), heads, cpu.data());
      const at::Tensor d_dst = on_gpu(dst, at::kLong), d_src = on_gpu(src, at::kLong),
                       d_gids = on_gpu(gids, at::kLong);
      at::Tensor out =
          at::empty({edges * heads}, at::TensorOptions().device(at::kCUDA).dtype(at::kFloat));
      kernels::edge_dropout_scale(Device::cuda(0), key, 0.6f, d_dst.data_ptr<int64_t>(),
                                  d_src.data_ptr<int64_t>(), edges, d_gids.data_ptr<int64_t>() + 1,
                                  d_gids.data_ptr<int64_t>(), heads, out.data_ptr<float>());
      ASSERT_EQ(to_host<float>(out), cpu) << edges << " edges, " << heads << " heads";
    }
  }
}

TEST(DropoutCuda, BitsBeyondOneGridMatchTheCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  // 70,000 rows of 1,024: 2.24M words, more warps than one grid (65,535 x 8 warps) holds.
  const int64_t n = 70000, width = 1024, words = kernels::bit_words(width);
  std::vector<int64_t> gids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) gids[i] = 3 * i + 1;
  const DropoutKey key{5, 1, 1};
  std::vector<uint32_t> cpu(static_cast<size_t>(n * words));
  kernels::dropout_keep_bits(Device::cpu(), key, 0.5f, gids.data(), n, width, cpu.data());
  const at::Tensor d_gids = on_gpu(gids, at::kLong);
  at::Tensor out = at::empty({n * words}, at::TensorOptions().device(at::kCUDA).dtype(at::kInt));
  kernels::dropout_keep_bits(Device::cuda(0), key, 0.5f, d_gids.data_ptr<int64_t>(), n, width,
                             reinterpret_cast<uint32_t*>(out.data_ptr<int32_t>()));
  const std::vector<int32_t> gpu = to_host<int32_t>(out);
  ASSERT_EQ(std::memcmp(gpu.data(), cpu.data(), cpu.size() * 4), 0);
}

// Layer 0 over a sparse A X (model/sparse_features.h) on the GPU against the CPU: the matrix made
// sparse there (the same arrays), its entry bits bit for bit, and the product and weight gradient
// with and without a mask. The GPU sums with fused multiply-adds: equal within 1e-6 of the sum of
// the terms' magnitudes (the weight gradient's outputs sum about 10,000 terms), while one term
// misread (of magnitude ~1) would be off by far more.
TEST(DropoutCuda, SparseLayerInputMatchesTheCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const int64_t rows = 200000, cols = 96, d = 40;
  at::manual_seed(3);
  const at::Tensor z = at::randn({rows, cols}) * (at::rand({rows, cols}) < 0.05).to(at::kFloat);
  const std::optional<SparseFeatures> cpu = sparsify(z, 0.25), gpu = sparsify(z.cuda(), 0.25);
  ASSERT_TRUE(cpu.has_value() && gpu.has_value());
  for (const char* name : {"indptr", "indices", "values", "t_indptr", "t_rows", "t_entries"}) {
    const auto field = [&](const SparseFeatures& s) {
      const std::string n = name;
      return n == "indptr"     ? s.indptr
             : n == "indices"  ? s.indices
             : n == "values"   ? s.values
             : n == "t_indptr" ? s.t_indptr
             : n == "t_rows"   ? s.t_rows
                               : s.t_entries;
    };
    ASSERT_TRUE(at::equal(field(*cpu), field(*gpu).cpu())) << name;
  }
  const at::Tensor gids = at::arange(rows, at::kLong) * 3 + 1;
  const FeatureDropout drop{DropoutKey{4, 3, 0}, 0.5f};
  const DropoutMask cpu_mask = draw_sparse_dropout(drop, *cpu, gids, 3);
  const DropoutMask gpu_mask = draw_sparse_dropout(drop, *gpu, gids.cuda(), 3);
  ASSERT_TRUE(at::equal(cpu_mask.bits, gpu_mask.bits.cpu()));
  for (bool masked : {false, true}) {
    const auto keep = [&](const DropoutMask& m) {
      return masked ? reinterpret_cast<const uint32_t*>(m.bits.data_ptr<int32_t>()) : nullptr;
    };
    const float scale = masked ? cpu_mask.scale : 1.0f;
    for (bool transposed : {false, true}) {
      const kernels::CsrView a = transposed ? cpu->transposed() : cpu->view();
      const kernels::CsrView da = transposed ? gpu->transposed() : gpu->view();
      const int32_t* entries = transposed ? cpu->t_entries.data_ptr<int32_t>() : nullptr;
      const at::Tensor x = at::randn({a.cols, d});
      at::Tensor y = at::empty({a.rows, d}), gpu_y = at::empty({a.rows, d}, at::kCUDA);
      const at::Tensor gpu_x = x.cuda();
      kernels::masked_spmm(Device::cpu(), a, keep(cpu_mask), scale, entries, x.data_ptr<float>(), d,
                           y.data_ptr<float>());
      kernels::masked_spmm(Device::cuda(0), da, keep(gpu_mask), scale,
                           transposed ? gpu->t_entries.data_ptr<int32_t>() : nullptr,
                           gpu_x.data_ptr<float>(), d, gpu_y.data_ptr<float>());
      // The sum of the terms' magnitudes: the same product over |values| and |x|.
      const at::Tensor abs_values = cpu->values.abs(), abs_x = x.abs();
      kernels::CsrView abs_a = a;
      abs_a.values = abs_values.data_ptr<float>();
      at::Tensor magnitude = at::empty({a.rows, d});
      kernels::masked_spmm(Device::cpu(), abs_a, keep(cpu_mask), scale, entries,
                           abs_x.data_ptr<float>(), d, magnitude.data_ptr<float>());
      const at::Tensor excess = (gpu_y.cpu() - y).abs() - (1e-6 * magnitude + 1e-30);
      EXPECT_LE(excess.max().item<float>(), 0.0f)
          << "masked " << masked << " transposed " << transposed << ": largest difference "
          << (gpu_y.cpu() - y).abs().max().item<float>();
    }
  }
}

TEST(ScatterAddRowsCuda, SameSumsAsTheCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const int64_t rows = 500, n = 300, d = 37;
  std::vector<float> dst = random_rows(rows, d, 1);
  const std::vector<float> src = random_rows(n, d, 2);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) idx[k] = (k * 13 + 5) % rows;  // distinct: 13 and 500 coprime
  const at::Tensor d_dst = on_gpu(dst, at::kFloat), d_src = on_gpu(src, at::kFloat),
                   d_idx = on_gpu(idx, at::kLong);
  kernels::scatter_add_rows_cuda(d_src.data_ptr<float>(), d, d_idx.data_ptr<int64_t>(), n,
                                 d_dst.data_ptr<float>(), nullptr);
  kernels::scatter_add_rows(Device::cpu(), src.data(), d, idx.data(), n, dst.data());
  EXPECT_EQ(to_host<float>(d_dst), dst);
  // And the gather back out of the sums.
  at::Tensor d_out = at::empty({n * d}, at::TensorOptions().device(at::kCUDA));
  kernels::gather_rows_cuda(d_dst.data_ptr<float>(), d, d_idx.data_ptr<int64_t>(), n,
                            d_out.data_ptr<float>(), nullptr);
  std::vector<float> out(static_cast<size_t>(n * d));
  kernels::gather_rows(Device::cpu(), dst.data(), d, idx.data(), n, out.data());
  EXPECT_EQ(to_host<float>(d_out), out);
}

#else

TEST(DeviceKernels, NeedCuda) {
  GTEST_SKIP() << "built without CUDA (ADAQP_WITH_CUDA=0)";
}

#endif

}  // namespace
}  // namespace adaqp
