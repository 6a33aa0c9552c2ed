// How much slower this CPU computes a GNN layer than a GPU, and so which link rate keeps a GPU
// cluster's communication/computation ratio on a CPU virtual cluster (scripts/vcluster.sh):
//   equivalent rate = GPU-cluster rate x (GPU time / CPU time).
// Times the layer's two kernels on random data, at each thread count:
//   SpMM (aggregation): adaqp::kernels::spmm_cpu, a CSR matrix of N rows with E entries (E/N
//        uniformly random columns per row) times an N x D dense matrix;
//   GEMM (dense layer): an N x D by D x D product, a plain cache-blocked loop.
// The GPU side is modelled from published peak figures (NVIDIA H100 SXM5 datasheet: 3.35 TB/s
// HBM3, 67 TFLOP/s FP32 without tensor cores): SpMM as memory-bound (every entry reads its index,
// value and one D-wide row, every output row is written once; no cache reuse), GEMM at peak FP32.
// Both are optimistic for the GPU, so the equivalent rates are upper bounds on its speed.
// Usage: bench_compute_ratio [--nodes N] [--edges E] [--cols D] [--repeats R] [--threads 1,2]
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "adaqp/kernels/spmm.h"
#include "bench_options.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kGpuMemoryBytesPerS = 3.35e12;  // H100 SXM5 HBM3
constexpr double kGpuFp32FlopPerS = 67e12;       // H100 SXM5 FP32, no tensor cores
constexpr double kClusterGbits[] = {10.0, 25.0, 100.0};

struct Options {
  int64_t nodes = 200000;
  int64_t edges = 4000000;
  int64_t cols = 256;
  int repeats = 3;
  std::vector<int> threads = {1, 2};
};

Options parse_options(int argc, char** argv) {
  Options opt;
  adaqp::bench::Options cli(
      "bench_compute_ratio",
      "CPU time of one GCN layer against an H100 modelled from its datasheet");
  cli.add("--nodes", &opt.nodes, "nodes of the random graph", 1, (int64_t{1} << 31) - 1)
      .add("--edges", &opt.edges, "edges of the random graph (at least the nodes)")
      .add("--cols", &opt.cols, "feature columns")
      .add("--repeats", &opt.repeats, "timed runs (median reported)")
      .add("--threads", &opt.threads, "thread counts to run");
  cli.parse(argc, argv);
  if (opt.edges < opt.nodes) cli.fail("--edges must be at least --nodes");
  return opt;
}

// Rows of equal length (edges / nodes, the remainder spread over the first rows), uniformly
// random columns, weight 1/degree: a mean aggregation.
adaqp::kernels::CsrMatrix random_csr(int64_t nodes, int64_t edges, std::mt19937_64& rng) {
  adaqp::kernels::CsrMatrix a;
  a.rows = a.cols = nodes;
  a.indptr.resize(static_cast<size_t>(nodes) + 1, 0);
  for (int64_t i = 0; i < nodes; ++i)
    a.indptr[i + 1] = a.indptr[i] + edges / nodes + (i < edges % nodes ? 1 : 0);
  std::uniform_int_distribution<int32_t> column(0, static_cast<int32_t>(nodes - 1));
  a.indices.resize(static_cast<size_t>(edges));
  a.values.resize(static_cast<size_t>(edges));
  for (int64_t i = 0; i < nodes; ++i) {
    const float w = 1.0f / static_cast<float>(a.indptr[i + 1] - a.indptr[i]);
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      a.indices[k] = column(rng);
      a.values[k] = w;
    }
  }
  return a;
}

// c = a . b with a: n x k, b: k x m, c: n x m, all row-major. Blocks of rows in parallel; for
// each row, b's rows are streamed in blocks that stay in cache.
void gemm(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t m) {
  constexpr int64_t kRowBlock = 32, kDepthBlock = 64;
#pragma omp parallel for schedule(static)
  for (int64_t i0 = 0; i0 < n; i0 += kRowBlock) {
    const int64_t i1 = std::min(n, i0 + kRowBlock);
    std::fill(c + i0 * m, c + i1 * m, 0.0f);
    for (int64_t p0 = 0; p0 < k; p0 += kDepthBlock) {
      const int64_t p1 = std::min(k, p0 + kDepthBlock);
      for (int64_t i = i0; i < i1; ++i) {
        float* __restrict ci = c + i * m;
        for (int64_t p = p0; p < p1; ++p) {
          const float aip = a[i * k + p];
          const float* __restrict bp = b + p * m;
#pragma omp simd
          for (int64_t j = 0; j < m; ++j) ci[j] += aip * bp[j];
        }
      }
    }
  }
}

template <typename F>
double best_seconds(int repeats, F&& f) {
  double best = 0.0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    f();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (r == 0 || s < best) best = s;
  }
  return best;
}

double checksum(const std::vector<float>& v) {
  double sum = 0.0;
  for (const float x : v) sum += x;
  return sum;
}

int run(const Options& opt) {
  std::mt19937_64 rng(1);
  const adaqp::kernels::CsrMatrix a = random_csr(opt.nodes, opt.edges, rng);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const auto n = static_cast<size_t>(opt.nodes), d = static_cast<size_t>(opt.cols);
  std::vector<float> x(n * d), w(d * d), y(n * d);
  for (float& v : x) v = uniform(rng);
  for (float& v : w) v = uniform(rng);

  const double nnz = static_cast<double>(opt.edges), rows = static_cast<double>(opt.nodes);
  const double cols = static_cast<double>(opt.cols);
  const double spmm_bytes = nnz * (4.0 + 4.0 + 4.0 * cols) + rows * (8.0 + 4.0 * cols);
  const double spmm_flops = 2.0 * nnz * cols;
  const double gemm_flops = 2.0 * rows * cols * cols;
  const double spmm_gpu_s = spmm_bytes / kGpuMemoryBytesPerS;
  const double gemm_gpu_s = gemm_flops / kGpuFp32FlopPerS;

  for (const int threads : opt.threads) {
    omp_set_num_threads(threads);
    const double spmm_s = best_seconds(opt.repeats, [&] {
      adaqp::kernels::spmm_cpu(a.view(), x.data(), opt.cols, y.data(), false);
    });
    const double spmm_sum = checksum(y);
    const double gemm_s = best_seconds(
        opt.repeats, [&] { gemm(x.data(), w.data(), y.data(), opt.nodes, opt.cols, opt.cols); });
    const double gemm_sum = checksum(y);
    const double ratio = (spmm_gpu_s + gemm_gpu_s) / (spmm_s + gemm_s);
    std::string equiv_json, equiv_text;
    for (const double gbit : kClusterGbits) {
      equiv_json +=
          fmt::format(",\"equiv_mbit_per_s_for_{:g}gbit\":{:.2f}", gbit, gbit * 1e3 * ratio);
      equiv_text += fmt::format(" {:g} Gbit/s -> {:.1f} Mbit/s;", gbit, gbit * 1e3 * ratio);
    }
    std::cout << fmt::format(
                     "{{\"benchmark\":\"compute_ratio\",\"threads\":{},\"nodes\":{},\"edges\":{},"
                     "\"cols\":{},\"spmm_s\":{:.4f},\"spmm_gflop_per_s\":{:.2f},"
                     "\"spmm_model_gb_per_s\":{:.2f},\"spmm_gpu_model_s\":{:.6f},"
                     "\"gemm_s\":{:.4f},\"gemm_gflop_per_s\":{:.2f},\"gemm_gpu_model_s\":{:.6f},"
                     "\"spmm_ratio\":{:.3e},\"gemm_ratio\":{:.3e},\"layer_ratio\":{:.3e}{},"
                     "\"spmm_checksum\":{:.6e},\"gemm_checksum\":{:.6e}}}",
                     threads, opt.nodes, opt.edges, opt.cols, spmm_s, spmm_flops / spmm_s / 1e9,
                     spmm_bytes / spmm_s / 1e9, spmm_gpu_s, gemm_s, gemm_flops / gemm_s / 1e9,
                     gemm_gpu_s, spmm_gpu_s / spmm_s, gemm_gpu_s / gemm_s, ratio, equiv_json,
                     spmm_sum, gemm_sum)
              << "\n";
    std::cout << fmt::format(
                     "{} thread(s): SpMM {:.3f} s ({:.1f} GB/s modelled traffic; H100 model {:.2f} "
                     "ms), GEMM {:.3f} s ({:.1f} GFLOP/s; H100 model {:.2f} ms); the layer is "
                     "{:.0f}x slower than on an H100, so a GPU cluster's{}",
                     threads, spmm_s, spmm_bytes / spmm_s / 1e9, spmm_gpu_s * 1e3, gemm_s,
                     gemm_flops / gemm_s / 1e9, gemm_gpu_s * 1e3, 1.0 / ratio, equiv_text)
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_options(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "bench_compute_ratio: " << e.what() << "\n";
    return 1;
  }
}
