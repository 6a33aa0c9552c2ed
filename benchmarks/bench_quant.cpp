// Throughput of the stochastic quantizer against memory bandwidth measured in the same run.
// For each bit-width: quantize+pack (rows -> packed codes and metadata) and unpack+dequantize
// (packed -> rows), on one thread and on all threads. Throughput = float bytes of the rows
// (rows * dim * 4) per second: read by quantize, written by dequantize. The reference is memcpy of
// the same rows with the same thread count; fraction_of_memcpy = throughput / that bandwidth
// (memcpy reads and writes the floats, dequantize only writes them, so it can exceed 1).
// Correctness beside speed: the mean squared error of the round trip and its bound mean(s^2/4)
// (and, on CUDA, whether the device's bytes equal the CPU's). Then the host's cost of a block's
// layout when its widths change (ns a row, mixed widths).
// The CPU's rows say which vector path ran (cpu_isa; ADAQP_MAX_CPU_ISA=scalar measures the scalar
// one).
// --stride S > 1 measures the CPU codec on a send list's access pattern: the rows quantized are one
// of every S rows of a table S times as large, at an irregular place within each S (ascending, as
// a send list's local ids), and dequantized rows are added into such rows (dequantize_scatter_add,
// as a receiver adds partial gradients); throughput still counts the rows quantized. Beside
// memcpy, such rows report a copy of the same rows (gather_copy_gbps, fraction_of_gather_copy):
// rows a page apart read at about half memcpy's rate (4.7 against 10.9 GB/s on a Zen 4), so that
// copy, not memcpy, bounds the codec there.
// Usage: bench_quant [--rows N] [--dim D] [--threads T] [--repeats R] [--stride S]
//                    [--devices all|cpu|cuda]
//        defaults: 1048576 rows, dim 256, all OpenMP threads, 5 repeats (median reported), stride 1
//        (contiguous rows), all devices (cuda: the device codec only, checked against the CPU's
//        bytes).
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "adaqp/common/cpu_features.h"
#include "adaqp/common/error.h"
#include "adaqp/config.h"
#include "adaqp/quant/block_codec.h"
#include "adaqp/quant/quantizer.h"
#include "bench_options.h"

#if ADAQP_WITH_CUDA
#include <cuda_runtime.h>

#include "adaqp/kernels/cuda_device.h"
#include "adaqp/kernels/cuda_support.h"
#endif

namespace {

using adaqp::quant::QuantKey;
using Clock = std::chrono::steady_clock;

struct Options {
  int64_t rows = 1 << 20;
  int64_t dim = 256;
  int threads = 0;  // 0: omp_get_max_threads()
  int repeats = 5;
  int64_t stride = 1;
  std::string devices = "all";
};

Options parse(int argc, char** argv) {
  Options o;
  adaqp::bench::Options cli("bench_quant",
                            "Quantizer throughput per bit-width against memcpy in the same run");
  cli.add("--rows", &o.rows, "rows quantized")
      .add("--dim", &o.dim, "values per row")
      .add("--threads", &o.threads, "OpenMP threads (0, the default: all)", 0)
      .add("--repeats", &o.repeats, "timed runs (median reported)")
      .add("--stride", &o.stride, "1: contiguous rows; S: one row of every S (a send list)")
      .add("--devices", &o.devices, "all, cpu or cuda: the codecs measured");
  cli.parse(argc, argv);
  if (o.devices != "all" && o.devices != "cpu" && o.devices != "cuda")
    throw adaqp::Error("--devices: '" + o.devices + "' is not all, cpu or cuda");
  if (o.threads == 0) o.threads = omp_get_max_threads();
  if (o.stride < 1) throw adaqp::Error("--stride: " + std::to_string(o.stride) + " is below 1");
  if (o.stride > 1 && o.devices != "cpu")
    throw adaqp::Error("--stride " + std::to_string(o.stride) +
                       " measures the CPU codec alone: add --devices cpu");
  return o;
}

// Median wall time of `repeats` runs after one warm-up run.
double median_seconds(int repeats, const std::function<void()>& body) {
  body();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    body();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Rows with a different scale and offset each, values from a counter hash (cheap, reproducible).
std::vector<float> make_rows(int64_t rows, int64_t dim) {
  std::vector<float> x(static_cast<size_t>(rows * dim));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    const float scale = 0.01f + static_cast<float>(i % 97) * 0.1f;
    const float offset = static_cast<float>(i % 13) - 6.0f;
    for (int64_t e = 0; e < dim; ++e) {
      uint64_t h = static_cast<uint64_t>(i * dim + e) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 32;
      const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
      x[static_cast<size_t>(i * dim + e)] = offset + scale * (2.0f * u - 1.0f);
    }
  }
  return x;
}

void parallel_copy(const float* src, float* dst, int64_t count) {
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t begin = count * t / threads, end = count * (t + 1) / threads;
    std::memcpy(dst + begin, src + begin, sizeof(float) * static_cast<size_t>(end - begin));
  }
}

// dst row i = src row rows_at[i], for i < rows, the rows shared among the threads as the codec's.
void parallel_gather_copy(const float* src, const int64_t* rows_at, int64_t rows, int64_t dim,
                          float* dst) {
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(dim);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * dim, src + rows_at[i] * dim, row_bytes);
}

// Mean squared error of y against x over the rows quantized (row i of the codec is row
// rows_at[i] of both, or row i where rows_at is null) and the mean over rows of s^2/4 (the
// variance bound).
std::pair<double, double> round_trip_error(const std::vector<float>& x, const std::vector<float>& y,
                                           const int64_t* rows_at, const std::vector<float>& meta,
                                           int64_t dim) {
  const auto rows = static_cast<int64_t>(meta.size() / 2);
  double sq = 0.0, bound = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sq, bound)
  for (int64_t i = 0; i < rows; ++i) {
    const double s = meta[static_cast<size_t>(2 * i + 1)];
    bound += s * s / 4.0;
    const int64_t row = rows_at == nullptr ? i : rows_at[i];
    for (int64_t e = 0; e < dim; ++e) {
      const double diff = static_cast<double>(y[static_cast<size_t>(row * dim + e)]) -
                          x[static_cast<size_t>(row * dim + e)];
      sq += diff * diff;
    }
  }
  return {sq / static_cast<double>(rows * dim), bound / static_cast<double>(rows)};
}

// One result as a JSON line and a line for people; gather_gbps > 0: the copy of the same rows
// (--stride), reported beside memcpy.
void report(const std::string& device, const std::string& op, int bits, int threads,
            const Options& o, double seconds, double memcpy_gbps, const std::string& extra,
            double gather_gbps = 0.0) {
  const double gb = static_cast<double>(o.rows * o.dim) * sizeof(float) / 1e9;
  const double gbps = gb / seconds;
  // The CPU codec's vector path (ADAQP_MAX_CPU_ISA caps it).
  const std::string isa =
      device == "cpu" ? fmt::format(",\"cpu_isa\":\"{}\"", adaqp::cpu_isa_name(adaqp::cpu_isa()))
                      : "";
  const std::string gather =
      gather_gbps > 0.0
          ? fmt::format(",\"gather_copy_gbps\":{:.3f},\"fraction_of_gather_copy\":{:.3f}",
                        gather_gbps, gbps / gather_gbps)
          : "";
  std::cout << fmt::format(
                   "{{\"benchmark\":\"quant\",\"device\":\"{}\",\"op\":\"{}\",\"bits\":{},"
                   "\"threads\":{},\"rows\":{},\"dim\":{},\"repeats\":{},\"seconds_median\":{:.5f},"
                   "\"gbps\":{:.3f},\"memcpy_gbps\":{:.3f},\"fraction_of_memcpy\":{:.3f}{}{}{}}}",
                   device, op, bits, threads, o.rows, o.dim, o.repeats, seconds, gbps, memcpy_gbps,
                   gbps / memcpy_gbps, isa, gather, extra)
            << "\n";
  std::cout << fmt::format(
      "# {} {:<10} b={} threads={:<3} {:8.3f} GB/s = {:5.1f}% of memcpy ({:.3f} GB/s)", device, op,
      bits, threads, gbps, 100.0 * gbps / memcpy_gbps, memcpy_gbps);
  if (gather_gbps > 0.0) {
    std::cout << fmt::format(", {:5.1f}% of copying the same rows ({:.3f} GB/s)",
                             100.0 * gbps / gather_gbps, gather_gbps);
  }
  std::cout << "\n";
}

// The host's work when a block's widths change (one thread): the device codec's per-row slots
// (block_slots) and the CPU codec's groups (BlockLayout), for o.rows rows whose widths mix every
// message width at random, row by row, as the adaptive scheme's do (it sets each by its range).
void run_layout(const Options& o) {
  std::vector<uint8_t> widths(static_cast<size_t>(o.rows));
  for (int64_t i = 0; i < o.rows; ++i) {
    uint64_t h = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;  // splitmix64's finaliser
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    widths[static_cast<size_t>(i)] = static_cast<uint8_t>(
        adaqp::quant::message_width(static_cast<int>(h % adaqp::quant::kNumMessageWidths)));
  }
  std::vector<int32_t> slot(widths.size());
  adaqp::quant::BlockCounts counts;
  const double slots_s = median_seconds(
      o.repeats, [&] { adaqp::quant::block_slots(widths.data(), o.rows, slot.data(), &counts); });
  const double groups_s = median_seconds(o.repeats, [&] {
    const adaqp::quant::BlockLayout layout(widths.data(), o.rows, o.dim);
    if (layout.rows() != o.rows) throw adaqp::Error("the layout lost rows");
  });
  for (const auto& [op, seconds] :
       {std::pair{"block_slots", slots_s}, {"block_layout", groups_s}}) {
    const double ns = seconds * 1e9 / static_cast<double>(o.rows);
    std::cout << fmt::format(
                     "{{\"benchmark\":\"quant\",\"device\":\"cpu\",\"op\":\"{}\",\"threads\":1,"
                     "\"rows\":{},\"repeats\":{},\"seconds_median\":{:.5f},\"ns_per_row\":{:.2f}}}",
                     op, o.rows, o.repeats, seconds, ns)
              << "\n"
              << fmt::format("# cpu {:<12} mixed widths      {:8.2f} ns a row", op, ns) << "\n";
  }
}

#if ADAQP_WITH_CUDA
template <typename T>
using DeviceBuffer = adaqp::cuda::DeviceBuffer<T>;

// Median device time of `repeats` runs (CUDA events on the default stream) after a warm-up.
double cuda_median_seconds(int repeats, const std::function<void()>& body) {
  adaqp::cuda::Event start(/*timing=*/true), stop(/*timing=*/true);
  body();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    start.record(nullptr);
    body();
    stop.record(nullptr);
    stop.synchronize();
    times.push_back(stop.seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void run_cuda(const Options& o, const std::vector<float>& x, const std::vector<int64_t>& gids,
              const QuantKey& key) {
  if (adaqp::kernels::cuda_device_count() == 0) {
    std::cout << "# cuda: skipped, no CUDA device visible\n";
    return;
  }
  // One block of every row at the same width: the exchange's device codec (block_codec.h).
  const size_t elements = x.size();
  DeviceBuffer<float> d_x(elements), d_y(elements);
  DeviceBuffer<int64_t> d_gids(gids.size());
  DeviceBuffer<uint8_t> d_bits(gids.size()),
      d_block(static_cast<size_t>(o.rows * adaqp::quant::message_bytes(o.dim, 8)));
  DeviceBuffer<int32_t> d_slot(gids.size());
  DeviceBuffer<unsigned long long> d_status(1);
  ADAQP_CUDA_CHECK(
      cudaMemcpy(d_x.get(), x.data(), elements * sizeof(float), cudaMemcpyHostToDevice));
  ADAQP_CUDA_CHECK(
      cudaMemcpy(d_gids.get(), gids.data(), gids.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  const double copy_s = cuda_median_seconds(o.repeats, [&] {
    ADAQP_CUDA_CHECK(
        cudaMemcpyAsync(d_y.get(), d_x.get(), elements * sizeof(float), cudaMemcpyDeviceToDevice));
  });
  const double copy_gbps = static_cast<double>(elements) * sizeof(float) / 1e9 / copy_s;
  for (int bits : {2, 4, 8}) {
    const std::vector<uint8_t> widths(gids.size(), static_cast<uint8_t>(bits));
    std::vector<int32_t> slot(gids.size());
    adaqp::quant::BlockCounts counts;
    adaqp::quant::block_slots(widths.data(), o.rows, slot.data(), &counts);
    ADAQP_CUDA_CHECK(
        cudaMemcpy(d_bits.get(), widths.data(), widths.size(), cudaMemcpyHostToDevice));
    ADAQP_CUDA_CHECK(cudaMemcpy(d_slot.get(), slot.data(), slot.size() * sizeof(int32_t),
                                cudaMemcpyHostToDevice));
    ADAQP_CUDA_CHECK(cudaMemset(d_status.get(), 0xFF, sizeof(unsigned long long)));
    const double q_s = cuda_median_seconds(o.repeats, [&] {
      adaqp::quant::encode_block_cuda(d_bits.get(), d_slot.get(), counts, d_x.get(), o.dim, nullptr,
                                      d_gids.get(), key, d_block.get(), nullptr, d_status.get(),
                                      nullptr);
    });
    unsigned long long status = 0;
    ADAQP_CUDA_CHECK(cudaMemcpy(&status, d_status.get(), sizeof(status), cudaMemcpyDeviceToHost));
    if (status != ~0ull) throw adaqp::Error("an unquantizable row in the benchmark's rows");
    const double dq_s = cuda_median_seconds(o.repeats, [&] {
      adaqp::quant::decode_block_cuda(d_bits.get(), d_slot.get(), counts, d_block.get(), o.dim,
                                      d_y.get(), nullptr);
    });
    const adaqp::quant::BlockLayout layout(widths.data(), o.rows, o.dim);
    std::vector<uint8_t> block(static_cast<size_t>(layout.bytes())), cpu_block(block.size());
    ADAQP_CUDA_CHECK(cudaMemcpy(block.data(), d_block.get(), block.size(), cudaMemcpyDeviceToHost));
    adaqp::quant::encode_block(layout, x.data(), o.dim, nullptr, gids.data(), key,
                               cpu_block.data());
    const std::string extra =
        fmt::format(",\"bit_identical_to_cpu\":{}", block == cpu_block ? "true" : "false");
    report("cuda", "quantize", bits, 0, o, q_s, copy_gbps, extra);
    report("cuda", "dequantize", bits, 0, o, dq_s, copy_gbps, "");
  }
}
#endif

// The CPU codec on one thread and on all: quantize+pack and unpack+dequantize at each width
// against memcpy, then the host's cost of a block's layout.
void run_cpu(const Options& o, const std::vector<float>& x, const std::vector<int64_t>& gids,
             const QuantKey& key) {
  // The send list of --stride: row i of the codec is row i * stride + (an irregular offset).
  std::vector<int64_t> index;
  for (int64_t i = 0; o.stride > 1 && i < o.rows; ++i) {
    const uint64_t h = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    index.push_back(i * o.stride +
                    static_cast<int64_t>((h >> 32) % static_cast<uint64_t>(o.stride)));
  }
  const int64_t* rows_at = index.empty() ? nullptr : index.data();
  std::vector<float> y(x.size()), meta(2 * gids.size());
  std::vector<uint8_t> packed(
      static_cast<size_t>(o.rows * adaqp::quant::packed_row_bytes(o.dim, 8)));
  std::vector<int> thread_counts = {1};
  if (o.threads > 1) thread_counts.push_back(o.threads);
  for (int threads : thread_counts) {
    omp_set_num_threads(threads);
    const double copy_s =
        median_seconds(o.repeats, [&] { parallel_copy(x.data(), y.data(), o.rows * o.dim); });
    const double gb = static_cast<double>(o.rows * o.dim) * sizeof(float) / 1e9;
    const double copy_gbps = gb / copy_s;
    double gather_gbps = 0.0;
    if (rows_at != nullptr) {
      gather_gbps = gb / median_seconds(o.repeats, [&] {
                      parallel_gather_copy(x.data(), rows_at, o.rows, o.dim, y.data());
                    });
    }
    for (int bits : {2, 4, 8}) {
      const double q_s = median_seconds(o.repeats, [&] {
        adaqp::quant::quantize_rows(x.data(), o.dim, rows_at, gids.data(), o.rows, bits, key,
                                    packed.data(), reinterpret_cast<uint8_t*>(meta.data()),
                                    nullptr);
      });
      const auto* meta_bytes = reinterpret_cast<const uint8_t*>(meta.data());
      const auto dequantize = [&] {
        if (rows_at == nullptr) {
          adaqp::quant::dequantize_rows(packed.data(), meta_bytes, o.rows, o.dim, bits, y.data());
        } else {
          adaqp::quant::dequantize_scatter_add(packed.data(), meta_bytes, o.rows, o.dim, bits,
                                               rows_at, y.data());
        }
      };
      const double dq_s = median_seconds(o.repeats, dequantize);
      std::fill(y.begin(), y.end(), 0.0f);  // the added rows once, for the error
      dequantize();
      const auto [mse, bound] = round_trip_error(x, y, rows_at, meta, o.dim);
      const double wire = static_cast<double>(adaqp::quant::message_bytes(o.dim, bits)) /
                          static_cast<double>(o.dim * sizeof(float));
      const std::string extra =
          fmt::format(",\"mse\":{:.4e},\"mse_bound\":{:.4e},\"wire_bytes_per_float_byte\":{:.4f}",
                      mse, bound, wire);
      report("cpu", "quantize", bits, threads, o, q_s, copy_gbps, extra, gather_gbps);
      report("cpu", "dequantize", bits, threads, o, dq_s, copy_gbps, extra, gather_gbps);
    }
  }
  run_layout(o);
}

int run(const Options& o) {
  const std::vector<float> x = make_rows(o.rows * o.stride, o.dim);
  std::vector<int64_t> gids(static_cast<size_t>(o.rows));
  for (int64_t i = 0; i < o.rows; ++i) gids[static_cast<size_t>(i)] = i;
  const QuantKey key{1234, 1, 0, adaqp::RngStream::kQuantForward};
  if (o.devices != "cuda") run_cpu(o, x, gids, key);
  if (o.devices == "cpu") return 0;
#if ADAQP_WITH_CUDA
  run_cuda(o, x, gids, key);
#else
  std::cout << "# cuda: skipped, built without CUDA\n";
#endif
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "bench_quant: " << e.what() << "\n";
    return 1;
  }
}
