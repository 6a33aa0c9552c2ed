// Node features made from edge features (DatasetSpec::features_from_edges): the OGB loaders stream
// every edge's feature row through add(), and finish() leaves the slice's rows in its features.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"

#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"

namespace adaqp {

class EdgeFeatureSums {
 public:
  // `source`: the edge features' file (or member), for errors.
  EdgeFeatureSums(NodeRange keep, const EdgeFeatureNodes& how, std::string source)
      : keep_(keep), how_(how), source_(std::move(source)) {}

  // Before the first add: the width of every edge's row. InputError naming the source for rows of
  // no columns (nothing to make features of).
  void start(int64_t dim) {
    if (dim < 1)
      throw InputError(source_, "dataset.features_from_edges",
                       "has rows of 0 columns: no node features can be made from them");
    dim_ = dim;
    sums_.assign(static_cast<size_t>(keep_.count * dim), 0.0);
    counts_.assign(static_cast<size_t>(keep_.count), 0);
  }

  // Edge src -> dst's row of dim values: to dst's sum, and with both_ends to src's (a self-loop's
  // once: it is its own reverse edge, which symmetrize does not add again).
  void add(int64_t src, int64_t dst, const float* row) {
    ++rows_;
    add_to(dst, row);
    if (how_.both_ends && src != dst) add_to(src, row);
  }

  // The kept nodes' sums, or means over their edges (a node without edges: zeros), into
  // `features` and `feat_dim`. InputError naming the source when the file had no rows (a dataset
  // without edges: nothing to make features of), or the node and the column of a sum beyond
  // float32's range.
  void finish(int64_t& feat_dim, std::vector<float>& features) const {
    if (rows_ == 0)
      throw InputError(source_, "dataset.features_from_edges",
                       "has no rows (the dataset has no edges): no node features can be made "
                       "from it");
    feat_dim = dim_;
    features.assign(sums_.size(), 0.0f);
    for (int64_t v = 0; v < keep_.count; ++v) {
      const double scale = how_.reduce == FeaturesFromEdges::kMean && counts_[v] > 0
                               ? 1.0 / static_cast<double>(counts_[v])
                               : 1.0;
      for (int64_t c = 0; c < dim_; ++c) {
        const size_t at = static_cast<size_t>(v * dim_ + c);
        const double value = sums_[at] * scale;
        if (!(std::fabs(value) <= std::numeric_limits<float>::max()))
          throw InputError(source_, "dataset.features_from_edges",
                           fmt::format("node {} feature {}: the {} of its edges' values, {}, is "
                                       "beyond float32's range",
                                       keep_.first + v, c, to_string(how_.reduce), value));
        features[at] = static_cast<float>(value);
      }
    }
  }

 private:
  void add_to(int64_t node, const float* row) {
    if (node < keep_.first || node >= keep_.first + keep_.count) return;
    const int64_t v = node - keep_.first;
    ++counts_[v];
    double* sum = sums_.data() + v * dim_;
    for (int64_t c = 0; c < dim_; ++c) sum[c] += row[c];
  }

  NodeRange keep_;
  EdgeFeatureNodes how_;
  std::string source_;
  int64_t dim_ = 0;
  int64_t rows_ = 0;          // add() calls, the slice's edges or not
  std::vector<double> sums_;  // keep.count x dim, summed in double: a mean of many edges exact
  std::vector<int64_t> counts_;
};

}  // namespace adaqp
