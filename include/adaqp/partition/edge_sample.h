// partition.sample_degree: the sample of a symmetric graph that METIS and PT-Scotch partition
// instead of the whole graph. Every node keeps its `degree` neighbours of smallest edge hash (all
// of them when it has no more), and the sample holds every edge that either end keeps: it is
// symmetric, a uniform share of each row (a node's share of edges into each community survives),
// and the same however the graph is sliced, so both partitioners see the same sample.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace adaqp {

// A hash of the undirected edge {u, v}, the same at both ends (splitmix64's finaliser).
inline uint64_t edge_hash(int64_t u, int64_t v, uint64_t seed) {
  uint64_t x = static_cast<uint64_t>(std::min(u, v)) * 0x9E3779B97F4A7C15ULL ^
               static_cast<uint64_t>(std::max(u, v)) ^ seed;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Chooses the neighbours each row keeps.
class RowSampler {
 public:
  RowSampler(int64_t degree, uint64_t seed) : degree_(degree), seed_(seed) {}

  // v's kept neighbours among [first, last) (its row, no repeats), in no particular order; valid
  // until the next call.
  template <class T>
  const std::vector<int64_t>& keep(int64_t v, const T* first, const T* last) {
    row_.clear();
    for (const T* u = first; u != last; ++u) row_.emplace_back(edge_hash(v, *u, seed_), *u);
    const auto end = row_.begin() + std::min<int64_t>(degree_, static_cast<int64_t>(row_.size()));
    std::nth_element(row_.begin(), end, row_.end());
    kept_.clear();
    for (auto it = row_.begin(); it != end; ++it) kept_.push_back(it->second);
    return kept_;
  }

 private:
  int64_t degree_;
  uint64_t seed_;
  std::vector<std::pair<uint64_t, int64_t>> row_;  // (hash, neighbour)
  std::vector<int64_t> kept_;
};

// Replaces a whole symmetric graph (rows sorted, no repeats, no self-loops) by its sample.
// Holds the kept choices (at most degree per node) and the sample beside the graph.
template <class T>
void sample_symmetric_rows(std::vector<T>& indptr, std::vector<T>& indices, int64_t degree,
                           uint64_t seed) {
  const int64_t n = static_cast<int64_t>(indptr.size()) - 1;
  RowSampler sampler(degree, seed);
  std::vector<T> choice_ptr(static_cast<size_t>(n) + 1, 0), choices;
  std::vector<int64_t> count(static_cast<size_t>(n) + 1, 0);
  for (int64_t v = 0; v < n; ++v) {
    for (const int64_t u :
         sampler.keep(v, indices.data() + indptr[v], indices.data() + indptr[v + 1])) {
      choices.push_back(static_cast<T>(u));
      ++count[v + 1];
      ++count[u + 1];
    }
    choice_ptr[v + 1] = static_cast<T>(choices.size());
  }
  std::vector<T>().swap(indices);
  for (int64_t v = 0; v < n; ++v) count[v + 1] += count[v];
  std::vector<T> sample(static_cast<size_t>(count[n]));
  for (int64_t v = 0; v < n; ++v)
    for (T k = choice_ptr[v]; k < choice_ptr[v + 1]; ++k) {
      const int64_t u = choices[k];
      sample[count[v]++] = static_cast<T>(u);
      sample[count[u]++] = static_cast<T>(v);
    }
  // count[v] is now the end of v's row; an edge both ends keep appears twice in each row.
  int64_t kept = 0, begin = 0;
  for (int64_t v = 0; v < n; ++v) {
    const auto first = sample.begin() + begin, last = sample.begin() + count[v];
    begin = count[v];
    std::sort(first, last);
    kept = std::copy(first, std::unique(first, last), sample.begin() + kept) - sample.begin();
    indptr[v + 1] = static_cast<T>(kept);
  }
  sample.resize(static_cast<size_t>(kept));
  sample.shrink_to_fit();
  indices = std::move(sample);
}

}  // namespace adaqp
