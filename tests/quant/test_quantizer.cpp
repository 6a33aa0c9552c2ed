#include "adaqp/quant/quantizer.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/quant/quant_math.h"
#include "subnormals.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace adaqp::quant {
namespace {

constexpr int kBitWidths[] = {2, 4, 8};

std::vector<float> random_rows(int64_t n, int64_t d, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(static_cast<size_t>(n * d));
  for (float& v : x) v = dist(gen);
  return x;
}

std::vector<int64_t> iota_ids(int64_t n, int64_t first) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), first);
  return ids;
}

uint8_t* as_bytes(std::vector<float>& meta) {
  return reinterpret_cast<uint8_t*>(meta.data());
}

const uint8_t* as_bytes(const std::vector<float>& meta) {
  return reinterpret_cast<const uint8_t*>(meta.data());
}

// Output of quantize_rows for n rows.
struct Quantized {
  std::vector<uint8_t> packed;
  std::vector<float> meta, ranges;
};

Quantized quantize(const std::vector<float>& src, int64_t d, const int64_t* row_index,
                   const std::vector<int64_t>& gids, int bits, const QuantKey& key) {
  const auto n = static_cast<int64_t>(gids.size());
  const int64_t row_bytes = packed_row_bytes(d, bits);
  constexpr size_t kGuard = 8;  // bytes after the rows, which nothing may write
  Quantized q;
  q.packed.assign(static_cast<size_t>(n * row_bytes) + kGuard, 0xAB);
  q.meta.assign(static_cast<size_t>(n * 2), -1.0f);
  q.ranges.assign(static_cast<size_t>(n), -1.0f);
  quantize_rows(src.data(), d, row_index, gids.data(), n, bits, key, q.packed.data(),
                as_bytes(q.meta), q.ranges.data());
  for (size_t k = q.packed.size() - kGuard; k < q.packed.size(); ++k)
    EXPECT_EQ(q.packed[k], 0xAB) << "written past the rows, b=" << bits << " d=" << d;
  q.packed.resize(q.packed.size() - kGuard);
  // The unused high bits of each row's last byte are zero (the wire format, quantizer.h).
  const int used = static_cast<int>(d * bits % 8);
  for (int64_t i = 0; i < n && used != 0; ++i)
    EXPECT_EQ(q.packed[static_cast<size_t>((i + 1) * row_bytes - 1)] >> used, 0)
        << "row " << i << " b=" << bits << " d=" << d;
  return q;
}

std::vector<uint8_t> codes_of_row(const Quantized& q, int64_t i, int64_t d, int bits) {
  std::vector<uint8_t> codes(static_cast<size_t>(d));
  unpack_codes(q.packed.data() + i * packed_row_bytes(d, bits), d, bits, codes.data());
  return codes;
}

std::vector<float> dequantize(const Quantized& q, int64_t n, int64_t d, int bits) {
  std::vector<float> out(static_cast<size_t>(n * d));
  dequantize_rows(q.packed.data(), as_bytes(q.meta), n, d, bits, out.data());
  return out;
}

// Code k sits at bits (k*b) % 8 of byte k*b/8, the last byte's unused bits are zero, and unpacking
// gives the codes back, for every width and every d up to 1025.
TEST(QuantPacking, RoundTripsEveryWidthAndLength) {
  std::mt19937 gen(11);
  for (int bits : kBitWidths) {
    for (int64_t d = 1; d <= 1025; ++d) {
      std::vector<uint8_t> codes(static_cast<size_t>(d));
      for (uint8_t& c : codes) c = static_cast<uint8_t>(gen() & ((1u << bits) - 1u));
      const int64_t bytes = packed_row_bytes(d, bits);
      ASSERT_EQ(bytes, (d * bits + 7) / 8);
      std::vector<uint8_t> packed(static_cast<size_t>(bytes) + 1, 0xCD);
      pack_codes(codes.data(), d, bits, packed.data());
      ASSERT_EQ(packed[static_cast<size_t>(bytes)], 0xCD) << "wrote past the row, d=" << d;
      for (int64_t k = 0; k < d; ++k) {
        const uint32_t field =
            (packed[static_cast<size_t>(k * bits / 8)] >> ((k * bits) % 8)) & ((1u << bits) - 1u);
        ASSERT_EQ(field, codes[static_cast<size_t>(k)]) << "b=" << bits << " d=" << d << " k=" << k;
      }
      const int64_t used_bits = d * bits - (bytes - 1) * 8;
      ASSERT_EQ(packed[static_cast<size_t>(bytes - 1)] >> used_bits, 0) << "d=" << d;
      std::vector<uint8_t> back(static_cast<size_t>(d), 0xEE);
      unpack_codes(packed.data(), d, bits, back.data());
      ASSERT_EQ(back, codes) << "b=" << bits << " d=" << d;
    }
  }
}

// The process computes with IEEE subnormals (checked first in the suite, in the process's state
// after the tests before it; on the GPU machine, CUDA's). The codec no longer depends on it (it
// clears the bits for its own calls: SubnormalsHoldWhereTheCallingThreadsFlushThem below); a
// failure here says a library the process loaded sets them, and every other float result on the CPU
// may then differ from IEEE's.
TEST(QuantFormula, HostArithmeticKeepsSubnormals) {
  EXPECT_TRUE(test::subnormals_kept()) << test::subnormal_report();
}

#if defined(__x86_64__)
// The codec computes with IEEE subnormals whatever the calling threads' MXCSR: with flush-to-zero
// and denormals-are-zero set on the caller and on the threads of its team (as a library built with
// -ffast-math leaves them), rows of subnormal range, alone and among others, give the bytes, ranges
// and values they give with both bits clear, on one thread and on three; the bits are the caller's
// again afterwards.
TEST(QuantFormula, SubnormalsHoldWhereTheCallingThreadsFlushThem) {
  constexpr unsigned kFlush = 0x8040u;  // FTZ and DAZ
  const int64_t d = 33, n = 2100;       // n*d above the parallel threshold
  std::vector<float> src = random_rows(n, d, -2.5f, 4.0f, 71);
  for (int64_t i = 0; i < n; i += 2) {
    for (int64_t e = 0; e < d; ++e) src[i * d + e] *= 1.0e-39f;
  }
  const std::vector<int64_t> gids = iota_ids(n, 9);
  const QuantKey key{0x5eed, 4, 1, RngStream::kQuantForward};
  const int saved_threads = omp_get_max_threads();
  const unsigned saved_csr = _mm_getcsr();
  // On the team, then on the caller: libgomp leaves each thread's MXCSR as it is, while libomp
  // (clang's) copies the caller's into the team at each fork and puts it back at the join.
  const auto set_everywhere = [](unsigned csr) {
#pragma omp parallel
    _mm_setcsr(csr);
    _mm_setcsr(csr);
  };
  for (int bits : kBitWidths) {
    for (int threads : {1, 3}) {
      omp_set_num_threads(threads);
      const Quantized ieee = quantize(src, d, nullptr, gids, bits, key);
      const std::vector<float> values = dequantize(ieee, n, d, bits);
      std::vector<uint8_t> full(static_cast<size_t>(n * d) * sizeof(float));
      std::vector<float> full_ranges(static_cast<size_t>(n));
      copy_full_precision_rows(src.data(), d, nullptr, gids.data(), n, key, full.data(),
                               full_ranges.data());
      set_everywhere(saved_csr | kFlush);
      const Quantized flushed = quantize(src, d, nullptr, gids, bits, key);
      const std::vector<float> flushed_values = dequantize(flushed, n, d, bits);
      std::vector<float> flushed_ranges(static_cast<size_t>(n));
      copy_full_precision_rows(src.data(), d, nullptr, gids.data(), n, key, full.data(),
                               flushed_ranges.data());
      const unsigned after = _mm_getcsr();
      set_everywhere(saved_csr);
      EXPECT_EQ(after & kFlush, kFlush) << "the caller's bits were not restored";
      EXPECT_EQ(flushed.meta, ieee.meta) << "b=" << bits << ", " << threads << " threads";
      EXPECT_EQ(flushed.packed, ieee.packed) << "b=" << bits << ", " << threads << " threads";
      EXPECT_EQ(flushed.ranges, ieee.ranges) << "b=" << bits << ", " << threads << " threads";
      EXPECT_EQ(flushed_values, values) << "b=" << bits << ", " << threads << " threads";
      EXPECT_EQ(flushed_ranges, full_ranges) << threads << " threads";
      ASSERT_GT(ieee.meta[1], 0.0f);  // row 0: a subnormal step, not a constant row
      ASSERT_LT(ieee.meta[1], FLT_MIN);
    }
  }
  omp_set_num_threads(saved_threads);
}
#endif

// Codes and metadata are exactly the documented formula: m = min, s and r from quant_row_params,
// and code e from byte e % 4 (low byte first) of word (e / 4) % 4 of philox_block(..., gid,
// e / 16). Rows come through the send list; normal steps (scaled by the product r) and subnormal
// ones (r = 0: divided by s), each through the vector path and the tail after it.
TEST(QuantFormula, CodesAndMetadataMatchTheReference) {
  const QuantKey key{0x5eed5eed12345678ull, 17, 2, RngStream::kQuantBackward};
  for (int bits : kBitWidths) {
    for (const float scale : {1.0f, 1.0e-39f})
      for (int64_t d : {1, 3, 4, 7, 31, 32, 33, 64, 255, 257}) {
        const int64_t n = 5;
        std::vector<float> src = random_rows(n + 3, d, -2.5f, 4.0f, 100 + d);
        for (float& v : src) v *= scale;
        const std::vector<int64_t> index = {7, 0, 3, 3, 5};
        const std::vector<int64_t> gids = {1000000007, 4, 1ll << 39, 12, 0};
        const Quantized q = quantize(src, d, index.data(), gids, bits, key);
        for (int64_t i = 0; i < n; ++i) {
          const float* x = src.data() + index[static_cast<size_t>(i)] * d;
          const float lo = *std::min_element(x, x + d), hi = *std::max_element(x, x + d);
          const RowParams p = quant_row_params(lo, hi, bits);
          ASSERT_TRUE(p.ok);
          EXPECT_EQ(q.meta[2 * i], lo);
          EXPECT_EQ(q.meta[2 * i + 1], p.s);
          EXPECT_EQ(q.ranges[i], hi - lo);
          if (d > 1) {
            // s is the smallest float from fl(range / L) up whose grid reaches the maximum.
            const float levels = static_cast<float>(quant_levels(bits));
            EXPECT_GT(p.s, 0.0f);
            EXPECT_LE((hi - lo) / p.s, levels);
            const float below = std::nextafter(p.s, 0.0f);
            EXPECT_TRUE(p.s == (hi - lo) / levels || (hi - lo) / below > levels);
            // r is the largest float from fl(256 / s) down whose products stay on the grid; 0
            // where 256 / s overflows.
            ASSERT_EQ(p.r == 0.0f, scale < 1.0f) << "b=" << bits << " d=" << d;
            if (p.r > 0.0f) {
              EXPECT_LE(p.r, 256.0f / p.s);
              EXPECT_LE((hi - lo) * p.r, 256.0f * levels);
              const float above = std::nextafter(p.r, FLT_MAX);
              EXPECT_TRUE(p.r == 256.0f / p.s || (hi - lo) * above > 256.0f * levels);
            }
          }
          const std::vector<uint8_t> codes = codes_of_row(q, i, d, bits);
          for (int64_t e = 0; e < d; ++e) {
            const PhiloxWords w =
                philox_block(key.seed, key.epoch, key.layer, key.stream,
                             static_cast<uint64_t>(gids[i]), static_cast<uint32_t>(e / 16));
            const uint32_t random_byte = (w.v[(e / 4) % 4] >> (8 * (e % 4))) & 0xFFu;
            const uint32_t want = p.s == 0.0f ? 0u : quant_code(x[e], p, random_byte);
            ASSERT_LE(want, quant_levels(bits)) << "b=" << bits << " d=" << d << " e=" << e;
            ASSERT_EQ(codes[e], want)
                << "b=" << bits << " d=" << d << " scale " << scale << " row " << i << " e=" << e;
          }
        }
      }
  }
}

// Every path scales by the product r where it is not 0, never by a division: in a row (d = 48: on
// AVX2 a vector group of 32, then a tail; on AVX-512 three blocks of 16) whose r * s is not 256,
// values placed where fl((x - m) * r) and fl((x - m) / s) * 256 round to neighbouring n, and where
// the element's random byte k makes (n + k) / 256 differ between them, must get the product's code.
// Found by search, as they depend on the rounding of both formulas.
TEST(QuantFormula, CodesScaleByTheProductWhereItIsNotZero) {
  const QuantKey key{77, 5, 1, RngStream::kQuantForward};
  const int64_t d = 48;
  const uint64_t gid = 4242;
  for (int bits : kBitWidths) {
    const float levels = static_cast<float>(quant_levels(bits));
    const RowParams p = quant_row_params(0.0f, 1.0f, bits);
    ASSERT_GT(p.r, 0.0f);
    ASSERT_NE(static_cast<double>(p.r) * p.s, 256.0) << "b=" << bits;
    std::vector<float> x(static_cast<size_t>(d), 0.5f);
    x[0] = 0.0f;
    x[1] = 1.0f;
    int64_t placed[2] = {0, 0};  // in the vector group, in the tail
    for (int64_t e = 2; e < d; ++e) {
      const PhiloxWords w = philox_block(key.seed, key.epoch, key.layer, key.stream, gid,
                                         static_cast<uint32_t>(e / 16));
      const uint32_t k = quant_random_byte(w, e);
      // (n + k) / 256 steps up from n = 256 j + 255 - k to n + 1: their tie is at n + 1/2.
      for (uint32_t j = 0; j < static_cast<uint32_t>(levels) && x[e] == 0.5f; ++j) {
        const float tie = (256.0f * static_cast<float>(j) + 255.0f - static_cast<float>(k) + 0.5f);
        float v = tie / p.r;
        for (int step = 0; step < 64; ++step) v = std::nextafter(v, 0.0f);
        for (int step = 0; step < 128 && v <= 1.0f; ++step, v = std::nextafter(v, 2.0f)) {
          const uint32_t by_product = quant_code(v, p, k);
          const auto by_division =
              (static_cast<uint32_t>(qadd(qmul(qdiv(v, p.s), 256.0f), 0.5f)) + k) >> 8;
          if (by_product != by_division) {
            x[e] = v;
            ++placed[e < 32 ? 0 : 1];
            break;
          }
        }
      }
    }
    ASSERT_GT(placed[0], 0) << "b=" << bits;
    ASSERT_GT(placed[1], 0) << "b=" << bits;
    const Quantized q = quantize(x, d, nullptr, {static_cast<int64_t>(gid)}, bits, key);
    const std::vector<uint8_t> codes = codes_of_row(q, 0, d, bits);
    for (int64_t e = 0; e < d; ++e) {
      const PhiloxWords w = philox_block(key.seed, key.epoch, key.layer, key.stream, gid,
                                         static_cast<uint32_t>(e / 16));
      ASSERT_EQ(codes[e], quant_code(x[e], p, quant_random_byte(w, e)))
          << "b=" << bits << " e=" << e;
    }
  }
}

// Dequantizing reads the codes straight from the packed words: every value is m + s*code (the
// documented formula, dequant_value) of the code the bytewise unpack finds, for every width and
// every d up to 80 (whole 32-bit words of codes and every tail after them).
TEST(QuantDequantize, ValuesAreTheFormulaOfTheUnpackedCodes) {
  const QuantKey key{12, 3, 1, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    for (int64_t d = 1; d <= 80; ++d) {
      const int64_t n = 3;
      const std::vector<float> src = random_rows(n, d, -3.0f, 2.0f, 300 + d);
      const Quantized q = quantize(src, d, nullptr, iota_ids(n, 7), bits, key);
      const std::vector<float> out = dequantize(q, n, d, bits);
      for (int64_t i = 0; i < n; ++i) {
        const std::vector<uint8_t> codes = codes_of_row(q, i, d, bits);
        for (int64_t e = 0; e < d; ++e) {
          ASSERT_EQ(out[i * d + e], dequant_value(q.meta[2 * i], q.meta[2 * i + 1], codes[e]))
              << "b=" << bits << " d=" << d << " row " << i << " e=" << e;
        }
      }
    }
  }
}

// Values on the grid m + k*s (s a power of two) come back exactly: (x - m)/s is an integer.
TEST(QuantFormula, GridValuesRoundTripExactly) {
  const QuantKey key{3, 1, 0, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    const uint32_t levels = quant_levels(bits);
    for (int64_t d = 2; d <= 1025; d += 17) {
      std::vector<float> x(static_cast<size_t>(d));
      for (int64_t e = 0; e < d; ++e)
        x[e] = -1.0f + 0.25f * static_cast<float>((e * 7) % (levels + 1));
      x[0] = -1.0f;
      x[1] = -1.0f + 0.25f * static_cast<float>(levels);
      const Quantized q = quantize(x, d, nullptr, {42}, bits, key);
      EXPECT_EQ(q.meta[1], 0.25f);
      EXPECT_EQ(dequantize(q, 1, d, bits), x) << "b=" << bits << " d=" << d;
    }
  }
}

// The same where s is not a power of two, so that r * s is not 256 and the products fl((x - m) r)
// miss the grid by float rounding: values fl(j s) from m = 0 still come back exactly.
TEST(QuantFormula, GridValuesOfAStepNotAPowerOfTwoRoundTripExactly) {
  const QuantKey key{3, 2, 0, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    const uint32_t levels = quant_levels(bits);
    int inexact = 0;  // steps whose r * s is not exactly 256
    for (const float step : {0.1f, 0.3f, 0.7f, 1.3f, 0.013f}) {
      const int64_t d = 77;  // two vector groups and a tail
      std::vector<float> x(static_cast<size_t>(d));
      for (int64_t e = 0; e < d; ++e) x[e] = static_cast<float>((e * 5) % (levels + 1)) * step;
      x[0] = 0.0f;
      x[1] = static_cast<float>(levels) * step;
      const RowParams p = quant_row_params(0.0f, x[1], bits);
      if (p.s != step) continue;  // the grid then is another one
      inexact += static_cast<double>(p.r) * p.s != 256.0 ? 1 : 0;
      const Quantized q = quantize(x, d, nullptr, {43}, bits, key);
      EXPECT_EQ(dequantize(q, 1, d, bits), x) << "b=" << bits << " s=" << step;
    }
    EXPECT_GT(inexact, 0) << "b=" << bits;
  }
}

// A constant row has s = 0, all codes 0, and comes back bit for bit, whatever its value.
TEST(QuantFormula, ConstantRowsAreExact) {
  const QuantKey key{9, 4, 1, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    for (float value : {0.1f, -3.0e20f, 1.0e-40f, 0.0f, 123456.789f, -FLT_MAX}) {
      for (int64_t d : {1, 5, 256}) {
        const std::vector<float> x(static_cast<size_t>(d), value);
        const Quantized q = quantize(x, d, nullptr, {77}, bits, key);
        EXPECT_EQ(q.meta[1], 0.0f);
        EXPECT_EQ(q.ranges[0], 0.0f);
        EXPECT_TRUE(
            std::all_of(q.packed.begin(), q.packed.end(), [](uint8_t b) { return b == 0; }));
        const std::vector<float> back = dequantize(q, 1, d, bits);
        EXPECT_EQ(std::memcmp(back.data(), x.data(), sizeof(float) * x.size()), 0)
            << "value " << value << " b=" << bits << " d=" << d;
      }
    }
  }
  // -0 comes back as +0 (equal in value): m is stored as +0 so that m + 0*q is exact.
  const std::vector<float> zeros = {-0.0f, 0.0f, -0.0f};
  const Quantized q = quantize(zeros, 3, nullptr, {1}, 2, key);
  EXPECT_EQ(dequantize(q, 1, 3, 2), std::vector<float>(3, 0.0f));
}

// Unbiased up to the dither's grid, with the documented variance, checked over K draws (epochs) per
// element: with n = floor(256 t + 1/2), a code is n / 256 rounded down or up (floor(t) or
// floor(t) + 1), up with probability f = (n mod 256) / 256, so the rounding-up frequency must be
// within 6 standard deviations of f, the mean within 6 standard deviations of m + s n / 256 (itself
// within s / 512 of x), and the sample variance at most s^2/4. Fixed seeds: the outcome is
// deterministic.
// t on the dither's grid: n / 256 with n = floor(256 t + 1/2) (quant_code) and 256 t the
// encoder's quant_scaled, the rest in exact arithmetic.
double dithered(float x, const RowParams& p) {
  return std::floor(static_cast<double>(quant_scaled(x, p)) + 0.5) / 256.0;
}

void check_unbiased(const std::vector<float>& x, int bits, int draws, const std::string& label) {
  const auto d = static_cast<int64_t>(x.size());
  const float lo = *std::min_element(x.begin(), x.end());
  const float hi = *std::max_element(x.begin(), x.end());
  const RowParams p = quant_row_params(lo, hi, bits);
  ASSERT_TRUE(p.ok) << label;
  std::vector<double> sum(d, 0.0);
  std::vector<int> ups(d, 0);
  for (int k = 0; k < draws; ++k) {
    const QuantKey key{2024, static_cast<uint32_t>(k), 1, RngStream::kQuantForward};
    const Quantized q = quantize(x, d, nullptr, {31337}, bits, key);
    ASSERT_EQ(q.meta[0], p.m);
    ASSERT_EQ(q.meta[1], p.s);
    const std::vector<uint8_t> codes = codes_of_row(q, 0, d, bits);
    const std::vector<float> y = dequantize(q, 1, d, bits);
    for (int64_t e = 0; e < d; ++e) {
      ASSERT_TRUE(std::isfinite(y[e])) << label;
      const auto whole = static_cast<uint32_t>(std::floor(dithered(x[e], p)));
      ASSERT_TRUE(codes[e] == whole || codes[e] == whole + 1) << label << " e=" << e;
      ups[e] += codes[e] == whole + 1 ? 1 : 0;
      sum[e] += y[e];
    }
  }
  const double s = p.s;
  for (int64_t e = 0; e < d; ++e) {
    const double t = dithered(x[e], p);
    const double f = t - std::floor(t);
    const double freq = static_cast<double>(ups[e]) / draws;
    EXPECT_LE(std::abs(freq - f), 6.0 * std::sqrt(f * (1.0 - f) / draws) + 1e-6)
        << label << " e=" << e << " f=" << f;
    const double mean = sum[e] / draws;
    // Float rounding (of x - m, of its product with r, of m + s*q) moves a draw by a few ulps of
    // the row's largest magnitude; the rows here span 0, so that bounds every term.
    const double scale =
        std::max(std::abs(static_cast<double>(lo)), std::abs(static_cast<double>(hi)));
    const double rounding = 1e-6 * scale;
    EXPECT_LE(std::abs(mean - x[e]), 6.0 * std::sqrt(s * s / 4.0 / draws) + s / 512 + rounding)
        << label << " e=" << e;
    EXPECT_LE(std::abs(mean - (p.m + s * t)), 6.0 * std::sqrt(s * s / 4.0 / draws) + rounding)
        << label << " e=" << e;
    // No separate variance check: every draw is one of two codes a step apart (asserted above),
    // so the variance is freq (1 - freq) s^2 <= s^2 / 4 (section 5's bound) whatever the encoder
    // does, and the rounding frequency checked above is what decides it.
  }
}

TEST(QuantStatistics, UnbiasedWithBoundedVariance) {
  for (int bits : kBitWidths) {
    std::vector<float> x = random_rows(1, 48, -3.0f, 5.0f, 5 + bits);
    check_unbiased(x, bits, 2000, "b=" + std::to_string(bits));
  }
}

// A row spread over 1e30 (and one near the float32 limit) quantizes to finite values, unbiased.
TEST(QuantStatistics, HugeRangesAreFiniteAndUnbiased) {
  std::vector<float> wide = random_rows(1, 24, -1.0e30f, 1.0e30f, 8);
  check_unbiased(wide, 2, 1000, "spread 2e30");
  std::vector<float> extreme = random_rows(1, 24, -1.6e38f, 1.6e38f, 9);
  check_unbiased(extreme, 8, 1000, "spread 3.2e38");
  std::vector<float> tiny = {0.0f, 1.0e-45f, 3.0e-45f, 7.0e-45f};  // subnormal range
  check_unbiased(tiny, 2, 1000, "subnormal");
}

TEST(QuantErrors, NonFiniteValueNamesLayerDirectionNodeAndElement) {
  const int64_t d = 40;
  std::vector<float> src = random_rows(8, d, -1.0f, 1.0f, 1);
  src[6 * d + 3] = std::numeric_limits<float>::quiet_NaN();
  src[2 * d + 0] = -std::numeric_limits<float>::infinity();
  const std::vector<int64_t> index = {0, 1, 6, 2};
  const std::vector<int64_t> gids = {10, 11, 123456789012ll, 13};
  const QuantKey key{1, 5, 2, RngStream::kQuantBackward};
  try {
    quantize(src, d, index.data(), gids, 4, key);
    FAIL() << "no error for a NaN";
  } catch (const NonFiniteError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layer 2 backward message of node 123456789012"), std::string::npos) << msg;
    EXPECT_NE(msg.find("epoch 5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("element 3 is nan"), std::string::npos) << msg;
  }
  const std::vector<int64_t> inf_first = {2, 6};
  try {
    quantize(src, d, inf_first.data(), {99, 100}, 8, QuantKey{1, 0, 0, RngStream::kQuantForward});
    FAIL() << "no error for an infinity";
  } catch (const NonFiniteError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layer 0 forward message of node 99"), std::string::npos) << msg;
    EXPECT_NE(msg.find("element 0 is -inf"), std::string::npos) << msg;
  }
}

TEST(QuantErrors, RangeBeyondFloat32IsRejected) {
  const std::vector<float> x = {-3.0e38f, 1.0f, 3.0e38f};
  try {
    quantize(x, 3, nullptr, {5}, 2, QuantKey{});
    FAIL() << "no error for an overflowing range";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("value range [-3e+38, 3e+38] overflows float32"),
              std::string::npos)
        << e.what();
  }
}

TEST(QuantErrors, UnsupportedBitWidthIsABug) {
  const std::vector<float> x = {1.0f, 2.0f};
  EXPECT_THROW(quantize(x, 2, nullptr, {0}, 3, QuantKey{}), InvariantError);
  std::vector<float> out(2);
  const uint8_t packed[1] = {0};
  const uint8_t meta[8] = {};
  EXPECT_THROW(dequantize_rows(packed, meta, 1, 2, 16, out.data()), InvariantError);
}

// Codes depend on the values and the key only: same bytes with 1 or 2 threads and on a repeat;
// another epoch, direction or node draws different codes.
TEST(QuantDeterminism, IndependentOfThreadCountAndKeyed) {
  const int64_t n = 3000, d = 100;  // n*d above the parallel threshold
  const std::vector<float> src = random_rows(n, d, -1.0f, 1.0f, 21);
  const std::vector<int64_t> gids = iota_ids(n, 500);
  const QuantKey key{77, 3, 1, RngStream::kQuantForward};
  const int saved = omp_get_max_threads();
  for (int bits : kBitWidths) {
    omp_set_num_threads(1);
    const Quantized one = quantize(src, d, nullptr, gids, bits, key);
    omp_set_num_threads(2);
    const Quantized two = quantize(src, d, nullptr, gids, bits, key);
    const Quantized again = quantize(src, d, nullptr, gids, bits, key);
    EXPECT_EQ(one.packed, two.packed);
    EXPECT_EQ(one.meta, two.meta);
    EXPECT_EQ(one.ranges, two.ranges);
    EXPECT_EQ(two.packed, again.packed);
    QuantKey next_epoch = key, backward = key;
    next_epoch.epoch += 1;
    backward.stream = RngStream::kQuantBackward;
    EXPECT_NE(quantize(src, d, nullptr, gids, bits, next_epoch).packed, one.packed);
    EXPECT_NE(quantize(src, d, nullptr, gids, bits, backward).packed, one.packed);
    EXPECT_NE(quantize(src, d, nullptr, iota_ids(n, 501), bits, key).packed, one.packed);
  }
  omp_set_num_threads(saved);
}

// Quantizing through a send list equals quantizing the gathered rows; the first bad row of the
// send list is reported whatever the thread count.
TEST(QuantDeterminism, SendListGatherEqualsPreGatheredRows) {
  const int64_t n = 900, d = 90;
  const std::vector<float> src = random_rows(n, d, -4.0f, 4.0f, 33);
  std::vector<int64_t> index(n);
  for (int64_t i = 0; i < n; ++i) index[i] = (i * 37) % n;
  std::vector<float> gathered(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n; ++i)
    std::copy_n(src.begin() + index[i] * d, d, gathered.begin() + i * d);
  const std::vector<int64_t> gids = iota_ids(n, 0);
  const QuantKey key{5, 6, 0, RngStream::kQuantForward};
  const Quantized via_index = quantize(src, d, index.data(), gids, 4, key);
  const Quantized direct = quantize(gathered, d, nullptr, gids, 4, key);
  EXPECT_EQ(via_index.packed, direct.packed);
  EXPECT_EQ(via_index.meta, direct.meta);
  EXPECT_EQ(via_index.ranges, direct.ranges);

  std::vector<float> bad = gathered;
  bad[700 * d + 1] = std::numeric_limits<float>::infinity();
  bad[400 * d + 2] = std::numeric_limits<float>::quiet_NaN();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    try {
      quantize(bad, d, nullptr, gids, 2, key);
      FAIL() << "no error";
    } catch (const NonFiniteError& e) {
      EXPECT_NE(std::string(e.what()).find("node 400 (epoch 6): element 2 is nan"),
                std::string::npos)
          << e.what();
    }
  }
}

// Scatter-add adds exactly the dequantized rows into the listed rows and leaves the others alone.
TEST(QuantDequantize, ScatterAddIntoListedRows) {
  const int64_t n = 6, d = 33, rows = 10;
  for (int bits : kBitWidths) {
    const std::vector<float> grads = random_rows(n, d, -0.5f, 0.5f, 44);
    const Quantized q = quantize(grads, d, nullptr, iota_ids(n, 90), bits,
                                 QuantKey{8, 2, 1, RngStream::kQuantBackward});
    const std::vector<float> rows_back = dequantize(q, n, d, bits);
    const std::vector<float> before = random_rows(rows, d, -1.0f, 1.0f, 45);
    std::vector<float> dst = before;
    const std::vector<int64_t> targets = {9, 2, 4, 0, 7, 3};
    dequantize_scatter_add(q.packed.data(), as_bytes(q.meta), n, d, bits, targets.data(),
                           dst.data());
    std::vector<float> want = before;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t e = 0; e < d; ++e) want[targets[i] * d + e] += rows_back[i * d + e];
    EXPECT_EQ(dst, want) << "b=" << bits;
  }
}

// Metadata is written and read bytewise: a block's pieces start at any byte (block_codec.h), and
// metadata at an odd address gives the same bytes and the same rows (UBSan's alignment check
// guards the accesses in the sanitizer build).
TEST(Quantizer, MetadataAtAnyByteOffset) {
  const int64_t n = 5, d = 13;
  const std::vector<float> src = random_rows(n, d, -2.0f, 3.0f, 11);
  const std::vector<int64_t> gids = iota_ids(n, 40);
  const QuantKey key{3, 1, 0, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    const Quantized aligned = quantize(src, d, nullptr, gids, bits, key);
    std::vector<uint8_t> packed(aligned.packed.size());
    std::vector<uint8_t> meta(static_cast<size_t>(8 * n + 3));
    quantize_rows(src.data(), d, nullptr, gids.data(), n, bits, key, packed.data(), meta.data() + 3,
                  nullptr);
    EXPECT_EQ(0, std::memcmp(meta.data() + 3, as_bytes(aligned.meta), static_cast<size_t>(8 * n)))
        << "bits " << bits;
    std::vector<float> out(static_cast<size_t>(n * d));
    dequantize_rows(packed.data(), meta.data() + 3, n, d, bits, out.data());
    EXPECT_EQ(out, dequantize(aligned, n, d, bits)) << "bits " << bits;
  }
}

// A constant row's codes are all zero whatever row the same thread quantized before it (its random
// words are skipped, the packed bytes filled), at every width and with and without a tail after the
// whole groups of 32 codes.
TEST(QuantFormula, ConstantRowAfterAVariedRowHasZeroCodes) {
  const QuantKey key{9, 4, 1, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    for (int64_t d : {5, 40, 77}) {
      std::vector<float> src = random_rows(3, d, -1.0f, 1.0f, static_cast<uint32_t>(60 + d));
      std::fill(src.begin() + d, src.begin() + 2 * d, 0.75f);
      const Quantized q = quantize(src, d, nullptr, {3, 4, 5}, bits, key);
      EXPECT_EQ(q.meta[2], 0.75f);
      EXPECT_EQ(q.meta[3], 0.0f);
      const int64_t row_bytes = packed_row_bytes(d, bits);
      EXPECT_TRUE(std::all_of(q.packed.begin() + row_bytes, q.packed.begin() + 2 * row_bytes,
                              [](uint8_t b) { return b == 0; }))
          << "b=" << bits << " d=" << d;
      EXPECT_EQ(dequantize(q, 3, d, bits)[static_cast<size_t>(d + d / 2)], 0.75f);
    }
  }
}

// The code is n = floor(256 t + 1/2) plus the random byte k, over 256: by hand, at s = 1, r = 256
// and m = 0 (t = x), where the rounding of t to the 1/256 grid and the byte's extremes decide.
TEST(QuantFormula, CodeIsTheDitheredGridValue) {
  struct Case {
    float x;
    uint32_t byte, code;
  };
  const Case cases[] = {
      {1.5f, 127, 1},                // n = 384: up for k >= 128
      {1.5f, 128, 2},                //
      {2.0f + 1.0f / 1024, 255, 2},  // n = 512: a quarter of a grid step above 2 rounds to 2
      {2.0f + 3.0f / 1024, 254, 2},  // n = 513: up only for k = 255
      {2.0f + 3.0f / 1024, 255, 3},  //
      {1.0f - 1.0f / 1024, 0, 1},    // n = 256: just below 1 is 1 for every k
      {3.0f, 255, 3},                // n = 768 = 256 L at 2 bits: never above L
      {0.0f, 255, 0},                //
  };
  const RowParams p = quant_row_params(0.0f, 3.0f, 2);
  ASSERT_EQ(p.s, 1.0f);
  ASSERT_EQ(p.r, 256.0f);
  for (const Case& c : cases)
    EXPECT_EQ(quant_code(c.x, p, c.byte), c.code) << "x=" << c.x << " k=" << c.byte;
}

// A value on the grid (t an integer), or within 1/512 of a step of it, comes back exactly on the
// grid even where its random byte is 255, the one that rounds up most (once in 256 elements).
// Rows keyed by nodes that draw 255 at an element of a whole group of 32 (the vector path) and at
// one of the tail (the scalar path).
TEST(QuantFormula, GridValuesStayExactWhereTheRandomByteIsLargest) {
  const QuantKey key{0xC0FFEEull, 7, 3, RngStream::kQuantForward};
  const int64_t d = 40;  // one group of 32, then a tail of 8
  std::vector<int64_t> gids;
  bool in_group = false, in_tail = false;
  for (uint64_t g = 0; g < (uint64_t{1} << 16) && !(in_group && in_tail); ++g) {
    bool group_max = false, tail_max = false;
    for (int64_t e = 0; e < d; ++e) {
      const PhiloxWords w = philox_block(key.seed, key.epoch, key.layer, key.stream, g,
                                         static_cast<uint32_t>(e / 16));
      if (((w.v[(e / 4) % 4] >> (8 * (e % 4))) & 0xFFu) == 0xFFu)
        (e < 32 ? group_max : tail_max) = true;
    }
    if ((group_max && !in_group) || (tail_max && !in_tail)) gids.push_back(static_cast<int64_t>(g));
    in_group = in_group || group_max;
    in_tail = in_tail || tail_max;
  }
  ASSERT_TRUE(in_group && in_tail);
  const auto n = static_cast<int64_t>(gids.size());
  for (int bits : kBitWidths) {
    const uint32_t levels = quant_levels(bits);
    for (const float offset : {0.0f, 0.25f / 1024, -0.25f / 1024}) {
      std::vector<float> grid(static_cast<size_t>(n * d)), x(grid.size());
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t e = 0; e < d; ++e) {
          const auto j = static_cast<uint32_t>((e * 5 + i) % (levels + 1));
          grid[i * d + e] = -1.0f + 0.25f * static_cast<float>(j);
          // The ends stay where they are, so that m = -1 and s = 1/4.
          x[i * d + e] = grid[i * d + e] + (j == 0 || j == levels ? 0.0f : offset);
        }
        x[i * d] = grid[i * d] = -1.0f;
        x[i * d + 1] = grid[i * d + 1] = -1.0f + 0.25f * static_cast<float>(levels);
      }
      const Quantized q = quantize(x, d, nullptr, gids, bits, key);
      EXPECT_EQ(dequantize(q, n, d, bits), grid) << "b=" << bits << " offset " << offset;
    }
  }
}

// Min and max follow the IEEE order bit for bit, signed zeros and subnormals included: -0 lies
// above every negative value and below +0 (and m is stored as +0 when it is -0).
TEST(QuantFormula, MinimumAndMaximumOfSignedZerosAndSubnormals) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  const QuantKey key{4, 2, 0, RngStream::kQuantForward};
  for (int bits : kBitWidths) {
    // {values}, the row minimum, the range
    const std::vector<float> rows[] = {{-0.0f, -tiny}, {-2 * tiny, -3 * tiny, -tiny}};
    const float mins[] = {-tiny, -3 * tiny}, spans[] = {tiny, 2 * tiny};
    for (int k = 0; k < 2; ++k) {
      const auto d = static_cast<int64_t>(rows[k].size());
      const Quantized q = quantize(rows[k], d, nullptr, {8}, bits, key);
      EXPECT_EQ(q.meta[0], mins[k]) << "row " << k << " b=" << bits;
      EXPECT_EQ(q.ranges[0], spans[k]) << "row " << k << " b=" << bits;
      EXPECT_EQ(dequantize(q, 1, d, bits), rows[k]) << "row " << k << " b=" << bits;  // on the grid
    }
    const std::vector<float> zeros = {0.0f, -0.0f, tiny};
    const Quantized q = quantize(zeros, 3, nullptr, {8}, bits, key);
    EXPECT_EQ(q.meta[0], 0.0f);
    EXPECT_FALSE(std::signbit(q.meta[0])) << "m = -0 is stored as +0";
    EXPECT_EQ(dequantize(q, 1, 3, bits), zeros);
    // -0 the only value below the positive ones: the minimum still, so m = +0 and not tiny.
    const std::vector<float> negative_zero = {2 * tiny, -0.0f, tiny};
    const Quantized z = quantize(negative_zero, 3, nullptr, {8}, bits, key);
    EXPECT_EQ(z.meta[0], 0.0f);
    EXPECT_FALSE(std::signbit(z.meta[0]));
    EXPECT_EQ(z.ranges[0], 2 * tiny);
  }
}

// A range of exactly FLT_MAX is finite and quantizes (the row is m = -2^127 .. FLT_MAX - 2^127).
TEST(QuantStatistics, RangeOfExactlyFloatMaxQuantizes) {
  const float lo = -0x1p127f, hi = FLT_MAX - 0x1p127f;
  ASSERT_EQ(hi - lo, FLT_MAX);
  const std::vector<float> x = {lo, 0.0f, hi, 1.0e38f};
  for (int bits : kBitWidths) {
    const Quantized q =
        quantize(x, 4, nullptr, {6}, bits, QuantKey{2, 1, 0, RngStream::kQuantForward});
    EXPECT_EQ(q.meta[0], lo);
    EXPECT_EQ(q.ranges[0], FLT_MAX);
    const std::vector<float> y = dequantize(q, 1, 4, bits);
    for (int64_t e = 0; e < 4; ++e) {
      ASSERT_TRUE(std::isfinite(y[e])) << "b=" << bits << " e=" << e;
      EXPECT_LE(std::abs(static_cast<double>(y[e]) - x[e]), static_cast<double>(q.meta[1]))
          << "b=" << bits << " e=" << e;
    }
  }
}

// A finite range whose largest dequantized value m + s*L overflows float32 (s rounded up past
// range / L next to FLT_MAX) cannot be quantized: an error, never an infinite value received.
TEST(QuantErrors, LargestDequantizedValueBeyondFloat32IsRejected) {
  const std::vector<float> x = {0x1.a2b3f4p+121f, 1.0e38f, FLT_MAX};
  ASSERT_LE(x[2] - x[0], FLT_MAX);
  try {
    quantize(x, 3, nullptr, {5}, 2, QuantKey{});
    FAIL() << "no error for m + s*L beyond FLT_MAX";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("overflows float32"), std::string::npos) << e.what();
  }
}

// Full-precision rows are the source rows' float32 bytes, through the send list and at any byte
// offset; the traced range is max - min, FLT_MAX where that spread overflows float32 (the values
// are finite and travel as they are). A NaN names the node and the element of the listed row.
TEST(QuantFullPrecision, RowsAreCopiedAndRangesClampedToFloatMax) {
  const int64_t d = 3, n = 3;
  const std::vector<float> src = {0.5f, -0.25f, 2.0f, -3.0e38f, 1.0f, 3.0e38f, 7.0f, 7.0f, 7.0f};
  const std::vector<int64_t> index = {1, 2, 0};
  const std::vector<int64_t> gids = {10, 11, 12};
  std::vector<uint8_t> out(sizeof(float) * n * d + 1, 0xEE);
  std::vector<float> ranges(n, -1.0f);
  copy_full_precision_rows(src.data(), d, index.data(), gids.data(), n, QuantKey{}, out.data() + 1,
                           ranges.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(std::memcmp(out.data() + 1 + sizeof(float) * d * i, src.data() + index[i] * d,
                          sizeof(float) * d),
              0)
        << "row " << i;
  }
  EXPECT_EQ(out[0], 0xEE);
  EXPECT_EQ(ranges, (std::vector<float>{FLT_MAX, 0.0f, 2.25f}));
  std::vector<float> bad = src;
  bad[2 * d + 1] = std::numeric_limits<float>::quiet_NaN();
  try {
    copy_full_precision_rows(bad.data(), d, index.data(), gids.data(), n,
                             QuantKey{1, 3, 2, RngStream::kQuantForward}, out.data(), nullptr);
    FAIL() << "no error for a NaN";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("node 11 (epoch 3): element 1 is nan"), std::string::npos)
        << e.what();
  }
  bad = src;  // an infinity: no range check would catch it here, as rows travel as they are
  bad[2 * d + 2] = std::numeric_limits<float>::infinity();
  try {
    copy_full_precision_rows(bad.data(), d, index.data(), gids.data(), n,
                             QuantKey{1, 3, 2, RngStream::kQuantForward}, out.data(), nullptr);
    FAIL() << "no error for an infinity";
  } catch (const NonFiniteError& e) {
    EXPECT_NE(std::string(e.what()).find("node 11 (epoch 3): element 2 is inf"), std::string::npos)
        << e.what();
  }
}

// A NaN or an infinity of either sign, at any element of a row (every vector lane and the scalar
// tail: 37 = 4 * 8 + 5 = 2 * 16 + 5), is found in rows of either sign, in zeros and in mixed rows,
// by the quantizer and by the full-precision copy (where nothing else would catch it). The x86
// default NaN of an invalid operation has its sign bit set, so a minimum and maximum that missed
// one sign's non-finite patterns would pass it on.
TEST(QuantErrors, NonFiniteOfEitherSignAnywhereInARowIsFound) {
  const int64_t d = 37;
  const uint32_t patterns[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                               0xFF800001u, 0x7F800000u, 0xFF800000u};
  const std::vector<std::pair<float, float>> spans = {
      {0.5f, 1.0f}, {-1.0f, -0.5f}, {-1.0f, 1.0f}, {0.0f, 0.0f}};
  for (const uint32_t pattern : patterns) {
    float bad_value;
    std::memcpy(&bad_value, &pattern, sizeof(bad_value));
    for (size_t span = 0; span < spans.size(); ++span) {
      const std::vector<float> clean =
          random_rows(1, d, spans[span].first, spans[span].second, static_cast<uint32_t>(span));
      for (int64_t e = 0; e < d; ++e) {
        std::vector<float> row = clean;
        row[e] = bad_value;
        const std::string where = "pattern " + std::to_string(pattern) + ", span " +
                                  std::to_string(span) + ", element " + std::to_string(e);
        const std::string named = "element " + std::to_string(e) + " is ";
        try {
          quantize(row, d, nullptr, {7}, 2, QuantKey{});
          ADD_FAILURE() << "quantize passed " << where;
        } catch (const NonFiniteError& err) {
          EXPECT_NE(std::string(err.what()).find(named), std::string::npos) << err.what();
        }
        std::vector<uint8_t> out(sizeof(float) * d);
        try {
          copy_full_precision_rows(row.data(), d, nullptr, std::vector<int64_t>{7}.data(), 1,
                                   QuantKey{}, out.data(), nullptr);
          ADD_FAILURE() << "the full-precision copy passed " << where;
        } catch (const NonFiniteError& err) {
          EXPECT_NE(std::string(err.what()).find(named), std::string::npos) << err.what();
        }
      }
    }
  }
}

// A row width of 0 is a bug at every entry point; zero rows are nothing to do.
TEST(QuantErrors, ZeroRowWidthIsABugAndZeroRowsAreNothingToDo) {
  const float x[2] = {1.0f, 2.0f};
  const int64_t gid = 0;
  uint8_t packed[8] = {0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB, 0xAB};
  uint8_t meta[8] = {};
  float out[2] = {5.0f, 5.0f};
  for (int bits : kBitWidths) {
    EXPECT_THROW(quantize_rows(x, 0, nullptr, &gid, 1, bits, QuantKey{}, packed, meta, nullptr),
                 InvariantError);
    EXPECT_THROW(dequantize_rows(packed, meta, 1, 0, bits, out), InvariantError);
    quantize_rows(x, 2, nullptr, &gid, 0, bits, QuantKey{}, packed, meta, nullptr);
    dequantize_rows(packed, meta, 0, 2, bits, out);
  }
  EXPECT_THROW(copy_full_precision_rows(x, 0, nullptr, &gid, 1, QuantKey{}, packed, nullptr),
               InvariantError);
  EXPECT_EQ(packed[0], 0xAB);
  EXPECT_EQ(out[0], 5.0f);
}

}  // namespace
}  // namespace adaqp::quant
