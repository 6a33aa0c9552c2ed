// A block of the normalised adjacency where a worker computes (A_local, A_halo, their transposes,
// the cover layout's S), and how its values are made from global degrees.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/common/device.h"
#include "adaqp/kernels/spmm.h"

namespace adaqp {

// How an aggregation y_i = sum_j a_ij h_j weights the edge j -> i, from GLOBAL degrees (the whole
// graph's, self-loops included when the dataset adds them). A layer type brings its own (conv.h:
// conv_norm); the graph only applies it.
struct EdgeNorm {
  const char* name;
  float (*weight)(int64_t in_deg_dst, int64_t out_deg_src);
};

// The values of a block in CSR (rows: destinations of in-degree in_deg[i]; columns: sources of
// out-degree col_out_deg[c]). A column of out-degree -1 is a partial sum (cover layout):
// coefficient 1.
std::vector<float> block_values(const EdgeNorm& norm, const std::vector<int64_t>& indptr,
                                const std::vector<int32_t>& indices,
                                const std::vector<int64_t>& in_deg,
                                const std::vector<int64_t>& col_out_deg);

// One block: its host CSR (a view of arrays that outlive it, or `owned`, e.g. a transpose with a
// pattern of its own), its arrays where the device computes (the host arrays themselves on the
// CPU, copies on a GPU; a block on the pattern of `same_pattern` shares that block's) and its
// product plan (kernels/spmm.h).
class AdjacencyBlock {
 public:
  AdjacencyBlock(const kernels::CsrView& view, kernels::CsrMatrix owned, const Device& device,
                 const AdjacencyBlock* same_pattern = nullptr);
  ~AdjacencyBlock();
  AdjacencyBlock(const AdjacencyBlock&) = delete;
  AdjacencyBlock& operator=(const AdjacencyBlock&) = delete;

  // The block's own transpose, on `device`.
  static std::unique_ptr<AdjacencyBlock> transpose(const kernels::CsrView& view,
                                                   const Device& device);

  const kernels::CsrView& view() const { return view_; }

  // y = A x (y += A x when accumulate), on the compute stream on CUDA.
  void multiply(const float* x, int64_t d, float* y, bool accumulate);

 private:
  kernels::CsrMatrix owned_;
  kernels::CsrView view_;
  at::Tensor indptr_, indices_, values_;
  std::unique_ptr<kernels::SpmmPlan> plan_;
};

}  // namespace adaqp
