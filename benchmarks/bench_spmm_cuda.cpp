// The GPU aggregation SpMM, cuSPARSE against the own row-per-warp kernel, on a generated graph with
// GCN weights 1/sqrt(deg(i) deg(j)), so the faster one can be chosen per GPU and width.
// For each width d and algorithm: median device time of y = A x (CUDA events), GFLOP/s (2 nnz d
// flops), effective GB/s (the bytes of the matrix, x and y read or written once: a lower bound on
// the traffic) and, beside the speed, the largest relative difference from the CPU reference
// spmm_cpu (largest |difference| divided by the largest |y|). The last line per width names the
// faster algorithm.
// Usage: bench_spmm_cuda [--nodes N] [--degree D] [--dims d1,d2,..] [--repeats R]
//        defaults: 200000 nodes, mean degree 20 (heavy-tailed), dims 16,64,256, 20 repeats.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "adaqp/config.h"
#include "adaqp/graph/generator.h"
#include "adaqp/kernels/spmm.h"
#include "bench_options.h"

#if ADAQP_WITH_CUDA
#include <cuda_runtime.h>

#include "adaqp/kernels/cuda_device.h"
#include "adaqp/kernels/cuda_support.h"
#include "adaqp/kernels/spmm_cuda.h"
#endif

namespace {

struct Options {
  int64_t nodes = 200000;
  double degree = 20.0;
  std::vector<int64_t> dims = {16, 64, 256};
  int repeats = 20;
};

Options parse(int argc, char** argv) {
  Options o;
  adaqp::bench::Options cli("bench_spmm_cuda", "cuSPARSE against the row-per-warp SpMM kernel");
  cli.add("--nodes", &o.nodes, "nodes of the random graph")
      .add("--degree", &o.degree, "average in-degree", 1.0, 1e6)
      .add("--dims", &o.dims, "feature columns to run")
      .add("--repeats", &o.repeats, "timed runs (median reported)");
  cli.parse(argc, argv);
  return o;
}

#if ADAQP_WITH_CUDA

template <typename T>
using DeviceArray = adaqp::cuda::DeviceBuffer<T>;

// The generated graph as a CSR matrix with GCN weights (in-neighbours per row).
adaqp::kernels::CsrMatrix gcn_matrix(const Options& o) {
  adaqp::GeneratorOptions g;
  g.num_nodes = o.nodes;
  g.avg_degree = o.degree;
  g.heavy_tailed = true;
  g.feat_dim = 1;
  g.seed = 1;
  const adaqp::Graph graph = adaqp::generate_graph(g);
  adaqp::kernels::CsrMatrix a;
  a.rows = a.cols = graph.num_nodes;
  a.indptr = graph.indptr;
  a.indices.reserve(graph.indices.size());
  a.values.reserve(graph.indices.size());
  for (int64_t i = 0; i < graph.num_nodes; ++i) {
    for (int64_t k = graph.indptr[i]; k < graph.indptr[i + 1]; ++k) {
      const int64_t j = graph.indices[k];
      a.indices.push_back(static_cast<int32_t>(j));
      a.values.push_back(static_cast<float>(
          1.0 / std::sqrt(static_cast<double>(graph.in_degree(i)) * graph.in_degree(j))));
    }
  }
  return a;
}

// Median device time of `repeats` products after one warm-up.
double median_seconds(adaqp::kernels::CudaSpmm& plan, const float* x, int64_t d, float* y,
                      int repeats) {
  adaqp::cuda::Event start(/*timing=*/true), stop(/*timing=*/true);
  plan.multiply(x, d, y, false, nullptr);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    start.record(nullptr);
    plan.multiply(x, d, y, false, nullptr);
    stop.record(nullptr);
    stop.synchronize();
    times.push_back(stop.seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Largest |gpu - cpu| over all elements, relative to the largest |cpu| (the output's scale).
double max_scaled_difference(const std::vector<float>& cpu, const std::vector<float>& gpu) {
  double diff = 0.0, scale = 0.0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(gpu[i]) - cpu[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(cpu[i])));
  }
  return scale > 0.0 ? diff / scale : diff;
}

void run(const Options& o) {
  using adaqp::kernels::CudaSpmm;
  using adaqp::kernels::CudaSpmmAlgorithm;
  const adaqp::kernels::CsrMatrix a = gcn_matrix(o);
  const auto nnz = static_cast<int64_t>(a.indices.size());
  std::cout << fmt::format("# graph: {} nodes, {} non-zeros (heavy-tailed, mean degree {})\n",
                           a.rows, nnz, o.degree);
  DeviceArray<int64_t> indptr(a.indptr);
  DeviceArray<int32_t> indices(a.indices);
  DeviceArray<float> values(a.values);
  const adaqp::kernels::CsrView view{a.rows, a.cols, indptr.get(), indices.get(), values.get()};
  for (int64_t d : o.dims) {
    std::vector<float> x(static_cast<size_t>(a.cols * d));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f;
    std::vector<float> cpu(static_cast<size_t>(a.rows * d));
    adaqp::kernels::spmm_cpu(a.view(), x.data(), d, cpu.data(), false);
    DeviceArray<float> x_dev(x);
    DeviceArray<float> y_dev(std::vector<float>(static_cast<size_t>(a.rows * d), 0.0f));
    const double bytes = static_cast<double>(a.indptr.size()) * 8 + static_cast<double>(nnz) * 8 +
                         static_cast<double>(a.cols + a.rows) * static_cast<double>(d) * 4;
    double best = 0.0;
    std::string best_name;
    for (CudaSpmmAlgorithm algorithm :
         {CudaSpmmAlgorithm::kCusparse, CudaSpmmAlgorithm::kRowWarp}) {
      CudaSpmm plan(view, algorithm);
      const double seconds = median_seconds(plan, x_dev.get(), d, y_dev.get(), o.repeats);
      const double diff = max_scaled_difference(cpu, y_dev.download());
      const double gflops = 2.0 * static_cast<double>(nnz) * static_cast<double>(d) / seconds / 1e9;
      const double gbps = bytes / seconds / 1e9;
      std::cout << fmt::format(
                       "{{\"benchmark\":\"spmm_cuda\",\"algorithm\":\"{}\",\"nodes\":{},\"nnz\":{},"
                       "\"dim\":{},\"repeats\":{},\"seconds_median\":{:.6f},\"gflops\":{:.2f},"
                       "\"gbps\":{:.2f},\"max_diff_vs_cpu_scaled\":{:.3e}}}",
                       adaqp::kernels::to_string(algorithm), a.rows, nnz, d, o.repeats, seconds,
                       gflops, gbps, diff)
                << "\n";
      std::cout << fmt::format(
                       "# {:<8} d={:<4} {:9.3f} ms {:8.1f} GFLOP/s {:7.1f} GB/s  max diff vs CPU "
                       "{:.2e} of max |y|",
                       adaqp::kernels::to_string(algorithm), d, seconds * 1e3, gflops, gbps, diff)
                << "\n";
      if (best_name.empty() || seconds < best) {
        best = seconds;
        best_name = adaqp::kernels::to_string(algorithm);
      }
    }
    std::cout << fmt::format("{{\"benchmark\":\"spmm_cuda\",\"dim\":{},\"faster\":\"{}\"}}", d,
                             best_name)
              << "\n";
  }
}

#endif

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
#if ADAQP_WITH_CUDA
    if (adaqp::kernels::cuda_device_count() == 0) {
      std::cout << "skipped: no CUDA device\n";
      return 0;
    }
    run(o);
#else
    (void)o;
    std::cout << "skipped: built without CUDA (ADAQP_WITH_CUDA=0)\n";
#endif
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_spmm_cuda: " << e.what() << "\n";
    return 1;
  }
}
