// Single-process dense references for the distributed layers: the whole graph's normalised
// adjacency as a dense matrix, in global node numbering. Shared by the in-process and the
// multi-rank tests.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph.h"
#include "adaqp/model/conv.h"
#include "adaqp/model/dist_graph.h"

namespace adaqp::test {

// Float32 results against the float64 references: within this absolute error.
constexpr double kDenseTol = 1e-5;

// The largest absolute difference of two tensors, in float64.
inline double max_error(const at::Tensor& got, const at::Tensor& want) {
  return (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>();
}

// ||got - want|| / ||want|| (Frobenius, float64); 0 when both are zero.
inline double relative_error(const at::Tensor& got, const at::Tensor& want) {
  const at::Tensor w = want.to(at::kDouble);
  const double norm = w.norm().item<double>();
  const double diff = (got.to(at::kDouble) - w).norm().item<double>();
  return norm == 0.0 ? diff : diff / norm;
}

// Quantized messages move a layer's outputs by up to a few steps of their rows' ranges: within
// this absolute error of the dense float64 outputs.
constexpr double kQuantizedOutputTol = 0.05;
// A message's noise can carry a pre-activation across a kink (a ReLU, attention's LeakyReLU) and
// change one node's gradient row by O(1), while a message sent to the wrong place moves whole
// gradients: quantized gradients are compared as a whole, within this relative Frobenius error.
constexpr double kQuantizedGradTol = 0.1;

// A gradient against the dense one: exact (full-precision messages) within kDenseTol of the
// largest entry (sums over every node in float32), else as a whole.
inline void expect_grad_close(const at::Tensor& got, const at::Tensor& want, bool exact,
                              const std::string& what) {
  if (exact) {
    EXPECT_LE(max_error(got, want), kDenseTol * std::max(1.0, want.abs().max().item<double>()))
        << what;
  } else {
    EXPECT_LE(relative_error(got, want), kQuantizedGradTol) << what;
  }
}

// A[i][j] = a_ij for every edge j -> i (float64), with the weights of the layers of `type` from the
// whole graph's degrees, written here independently of the runtime: GCN 1 / sqrt(out_deg(j)
// in_deg(i)), GraphSAGE-mean 1 / in_deg(i).
inline at::Tensor dense_adjacency(const Graph& g, ModelType type) {
  const int64_t n = g.num_nodes;
  const std::vector<int64_t> out_deg = g.out_degrees();
  at::Tensor a = at::zeros({n, n}, at::kDouble);
  auto acc = a.accessor<double, 2>();
  for (int64_t i = 0; i < n; ++i) {
    const double in_deg = static_cast<double>(g.in_degree(i));
    for (int64_t e = g.indptr[i]; e < g.indptr[i + 1]; ++e) {
      const int64_t j = g.indices[e];
      acc[i][j] += type == ModelType::kSage
                       ? 1.0 / in_deg
                       : 1.0 / std::sqrt(in_deg * static_cast<double>(out_deg[j]));
    }
  }
  return a;
}

// A small generated graph with self-loops, as the datasets of a GCN job are prepared.
inline Graph small_graph(int64_t nodes, uint64_t seed, int64_t classes = 4) {
  GeneratorOptions opt;
  opt.num_nodes = nodes;
  opt.num_classes = classes;
  opt.feat_dim = 12;
  opt.avg_degree = 6;
  opt.seed = seed;
  Graph g = generate_graph(opt);
  GraphTransform t;
  t.self_loops = true;
  apply_transform(g, t);
  return g;
}

// The generated graph without a third of its edges j -> i with j < i (the reverse edges kept):
// directed, so that in-edges and out-edges differ.
inline Graph directed_graph(int64_t nodes, uint64_t seed) {
  const Graph sym = small_graph(nodes, seed);
  std::vector<int64_t> src, dst;
  for (int64_t i = 0; i < sym.num_nodes; ++i) {
    for (int64_t e = sym.indptr[i]; e < sym.indptr[i + 1]; ++e) {
      const int64_t j = sym.indices[e];
      if (i == j || j > i || (i + j) % 3 != 0) {
        src.push_back(j);
        dst.push_back(i);
      }
    }
  }
  Graph g = Graph::from_edges(sym.num_nodes, src, dst);
  g.feat_dim = sym.feat_dim;
  g.features = sym.features;
  g.num_classes = sym.num_classes;
  g.labels = sym.labels;
  g.train = sym.train;
  g.valid = sym.valid;
  g.test = sym.test;
  return g;
}

// Rows `gids` of m (a global-numbering matrix).
inline at::Tensor rows_of(const at::Tensor& m, const std::vector<int64_t>& gids) {
  return m.index_select(0, at::tensor(at::ArrayRef<int64_t>(gids), at::kLong));
}

// A deterministic random matrix.
inline at::Tensor random_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::randn({rows, cols}, gen, at::kFloat);
}

}  // namespace adaqp::test
