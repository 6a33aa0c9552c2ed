// Where layer 0 over a sparse A X (model/sparse_features.h) beats the dense layer, and so the
// density below which training.sparse_features keeps A X sparse (kMaxSparseFeatureDensity).
// For each density, a random N x F matrix z with that share of non-zeros (uniform positions) and
// an H x F weight: a training step's layer 0 with dropout p = 0.5 (as the configs use), that is
// the mask's draw, the forward (z * mask) W^T + b and the weight gradient, once over the dense z
// (draw_dropout, dropout_linear: MKL's GEMM through libtorch) and once over z as CSR
// (draw_sparse_dropout at the non-zeros, sparse_dropout_linear: kernels::masked_spmm), on the same
// thread count. Prints the fastest of the repeats of each and their ratio.
// Usage: bench_sparse_features [--rows N] [--cols F] [--hidden H] [--threads T] [--repeats R]
//                              [--densities 0.01,0.05,...]
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/model/dropout.h"
#include "adaqp/model/sparse_features.h"
#include "bench_options.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int64_t rows = 20000, cols = 1000, hidden = 64;
  int threads = 1, repeats = 5;
  std::vector<double> densities = {0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5};
};

Options parse(int argc, char** argv) {
  Options o;
  adaqp::bench::Options cli("bench_sparse_features",
                            "Layer 0's training step over a dense and a sparse input per density");
  cli.add("--rows", &o.rows, "input rows")
      .add("--cols", &o.cols, "input columns")
      .add("--hidden", &o.hidden, "output columns")
      .add("--threads", &o.threads, "libtorch threads")
      .add("--repeats", &o.repeats, "timed runs (fastest reported)")
      .add("--densities", &o.densities, "input densities", 0.0, 1.0);
  cli.parse(argc, argv);
  return o;
}

// Fastest of `repeats` forward + backward passes of `layer` (which returns y), in seconds.
template <typename Layer>
double fastest(int repeats, const at::Tensor& w, const at::Tensor& b, const at::Tensor& r,
               Layer layer) {
  double best = std::numeric_limits<double>::infinity();
  for (int k = 0; k < repeats; ++k) {
    w.mutable_grad() = at::Tensor();
    b.mutable_grad() = at::Tensor();
    const auto t0 = Clock::now();
    (layer() * r).sum().backward();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace adaqp;
  try {
    const Options o = parse(argc, argv);
    at::set_num_threads(o.threads);
    at::manual_seed(1);
    const FeatureDropout drop{DropoutKey{1, 1, 0}, 0.5f};
    const at::Tensor gids = at::arange(o.rows, at::kLong);
    const at::Tensor w = at::randn({o.hidden, o.cols}).requires_grad_(true);
    const at::Tensor b = at::zeros({o.hidden}).requires_grad_(true);
    const at::Tensor r = at::randn({o.rows, o.hidden});
    std::cout << fmt::format("{} x {} input, hidden {}, {} thread(s), fastest of {}\n", o.rows,
                             o.cols, o.hidden, o.threads, o.repeats);
    std::cout << "density,dense_ms,sparse_ms,dense_over_sparse\n";
    for (double density : o.densities) {
      const at::Tensor z =
          at::randn({o.rows, o.cols}) * (at::rand({o.rows, o.cols}) < density).to(at::kFloat);
      const std::optional<SparseFeatures> sparse = sparsify(z, 1.0);
      const double dense_s = fastest(o.repeats, w, b, r, [&] {
        return dropout_linear(z, at::Tensor(), draw_dropout(drop, gids, o.cols), w, b,
                              at::Tensor());
      });
      const double sparse_s = fastest(o.repeats, w, b, r, [&] {
        return sparse_dropout_linear(*sparse, draw_sparse_dropout(drop, *sparse, gids, 0), w, b);
      });
      std::cout << fmt::format("{:.2f},{:.2f},{:.2f},{:.2f}\n", density, 1e3 * dense_s,
                               1e3 * sparse_s, dense_s / sparse_s);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_sparse_features: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
