#include "adaqp/graph/graph_slice.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "adaqp/common/error.h"
#include "row_transforms.h"

namespace adaqp {

NodeRange slice_range(int64_t num_nodes, int rank, int world) {
  ADAQP_CHECK(world >= 1 && rank >= 0 && rank < world, "rank within the world");
  const int64_t base = num_nodes / world, extra = num_nodes % world;
  NodeRange r;
  r.first = rank * base + std::min<int64_t>(rank, extra);
  r.count = base + (rank < extra ? 1 : 0);
  return r;
}

int slice_holder(int64_t num_nodes, int world, int64_t v) {
  const int64_t base = num_nodes / world, extra = num_nodes % world;
  const int64_t big = extra * (base + 1);  // nodes in the ranges of size base + 1
  if (v < big) return static_cast<int>(v / (base + 1));
  return static_cast<int>(extra + (v - big) / base);
}

Graph whole_graph(GraphSlice s) {
  ADAQP_CHECK(s.first == 0 && s.count() == s.num_nodes, "the slice holds every node");
  Graph g;
  g.name = std::move(s.name);
  g.num_nodes = s.num_nodes;
  g.indptr = std::move(s.indptr);
  g.indices = std::move(s.indices);
  g.feat_dim = s.feat_dim;
  g.features = std::move(s.features);
  g.num_classes = s.num_classes;
  g.multilabel = s.multilabel;
  g.labels = std::move(s.labels);
  g.multilabels = std::move(s.multilabels);
  g.train = std::move(s.train);
  g.valid = std::move(s.valid);
  g.test = std::move(s.test);
  return g;
}

GraphSlice slice_of(const Graph& g, int rank, int world) {
  const NodeRange range = slice_range(g.num_nodes, rank, world);
  const int64_t lo = range.first, hi = range.first + range.count;
  GraphSlice s;
  s.name = g.name;
  s.num_nodes = g.num_nodes;
  s.first = lo;
  s.indptr.resize(static_cast<size_t>(range.count) + 1);
  for (int64_t i = 0; i <= range.count; ++i) s.indptr[i] = g.indptr[lo + i] - g.indptr[lo];
  s.indices.assign(g.indices.begin() + g.indptr[lo], g.indices.begin() + g.indptr[hi]);
  s.feat_dim = g.feat_dim;
  s.features.assign(g.features.begin() + lo * g.feat_dim, g.features.begin() + hi * g.feat_dim);
  s.num_classes = g.num_classes;
  s.multilabel = g.multilabel;
  if (g.multilabel) {
    s.multilabels.assign(g.multilabels.begin() + lo * g.num_classes,
                         g.multilabels.begin() + hi * g.num_classes);
  } else {
    s.labels.assign(g.labels.begin() + lo, g.labels.begin() + hi);
  }
  const auto in_range = [&](const std::vector<int64_t>& ids) {
    return std::vector<int64_t>(std::lower_bound(ids.begin(), ids.end(), lo),
                                std::lower_bound(ids.begin(), ids.end(), hi));
  };
  s.train = in_range(g.train);
  s.valid = in_range(g.valid);
  s.test = in_range(g.test);
  return s;
}

void set_slice_rows(GraphSlice& s, int64_t rows, const std::vector<int64_t>& src,
                    const std::vector<int64_t>& dst) {
  ADAQP_CHECK(src.size() == dst.size(), "one source per target");
  s.indptr.assign(static_cast<size_t>(rows) + 1, 0);
  for (int64_t v : dst) {
    ADAQP_CHECK(v >= s.first && v < s.first + rows,
                "target " + std::to_string(v) + " in the slice");
    ++s.indptr[v - s.first + 1];
  }
  for (int64_t i = 0; i < rows; ++i) s.indptr[i + 1] += s.indptr[i];
  std::vector<int64_t> next(s.indptr.begin(), s.indptr.end() - 1);
  s.indices.resize(src.size());
  for (size_t e = 0; e < src.size(); ++e) s.indices[next[dst[e] - s.first]++] = src[e];
  for (int64_t i = 0; i < rows; ++i)
    std::sort(s.indices.begin() + s.indptr[i], s.indices.begin() + s.indptr[i + 1]);
}

void set_slice_self_loops(GraphSlice& s) {
  std::vector<int64_t> indptr(s.indptr.size(), 0);
  std::vector<int64_t> indices;
  indices.reserve(s.indices.size() + static_cast<size_t>(s.count()));
  for (int64_t i = 0; i < s.count(); ++i) {
    append_row_with_one_self_loop(s.indices.data() + s.indptr[i],
                                  s.indices.data() + s.indptr[i + 1], s.first + i, indices);
    indptr[i + 1] = static_cast<int64_t>(indices.size());
  }
  s.indptr = std::move(indptr);
  s.indices = std::move(indices);
}

void row_normalize_slice(GraphSlice& s) {
  for (int64_t i = 0; i < s.count(); ++i)
    normalize_row(s.features.data() + i * s.feat_dim, s.feat_dim);
}

}  // namespace adaqp
