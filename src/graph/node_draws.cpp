#include "node_draws.h"

#include <algorithm>
#include <cmath>

#include "adaqp/common/rng.h"

namespace adaqp {

void draw_class_features(Graph& g, const GeneratorOptions& o, const std::vector<int64_t>& nodes,
                         std::mt19937_64& rng) {
  NormalSampler normal;
  std::vector<double> means(o.num_classes * o.feat_dim);
  for (int64_t c = 0; c < o.num_classes; ++c) {
    double* m = &means[c * o.feat_dim];
    double norm2 = 0;
    for (int64_t j = 0; j < o.feat_dim; ++j) {
      m[j] = normal(rng);
      norm2 += m[j] * m[j];
    }
    const double scale = o.feature_signal / std::sqrt(norm2);
    for (int64_t j = 0; j < o.feat_dim; ++j) m[j] *= scale;
  }
  for (int64_t v : nodes) {
    const double* m = &means[g.labels[v] * o.feat_dim];
    float* x = &g.features[v * o.feat_dim];
    for (int64_t j = 0; j < o.feat_dim; ++j) x[j] = static_cast<float>(m[j] + normal(rng));
  }
}

void draw_node_split(Graph& g, const GeneratorOptions& o, std::vector<int64_t> nodes,
                     std::mt19937_64& rng) {
  shuffle_portable(nodes, rng);
  const auto n = static_cast<int64_t>(nodes.size());
  const auto count = [&](double f) {
    return std::min<int64_t>(n, std::llround(f * static_cast<double>(n)));
  };
  const int64_t n_train = count(o.train_fraction);
  const int64_t n_valid = std::min(count(o.valid_fraction), n - n_train);
  g.train.assign(nodes.begin(), nodes.begin() + n_train);
  g.valid.assign(nodes.begin() + n_train, nodes.begin() + n_train + n_valid);
  g.test.assign(nodes.begin() + n_train + n_valid, nodes.end());
  for (auto* split : {&g.train, &g.valid, &g.test}) std::sort(split->begin(), split->end());
}

}  // namespace adaqp
