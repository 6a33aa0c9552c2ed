// Training steps on W = mpirun's world size workers: after every step all ranks hold identical
// parameters, and they equal (up to summation order) single-worker training of the same model on
// the whole graph, run on each rank over MPI_COMM_SELF.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/train/trainer.h"
#include "dense_reference.h"
#include "mpi_world.h"

namespace adaqp {
namespace {

struct TrainingCase {
  ModelType type;
  bool layer_norm;
  bool multilabel;
  // Bag-of-words-like input: the distributed run reads A X (and GraphSAGE's root term X) sparse
  // (model/sparse_features.h), the single worker dense, so the comparison covers the sparse layer
  // 0 through the trainer.
  bool sparse_input = false;
};

void PrintTo(const TrainingCase& c, std::ostream* os) {
  *os << to_string(c.type) << (c.layer_norm ? " with LayerNorm" : "")
      << (c.multilabel ? ", multi-label" : "") << (c.sparse_input ? ", sparse input" : "");
}

// Replaces the features by 64 columns with about 2% non-zero (A X: about 15%, under
// kMaxSparseFeatureDensity).
void make_sparse_features(Graph& g) {
  std::mt19937_64 rng(23);
  std::normal_distribution<float> value(0.0f, 1.0f);
  g.feat_dim = 64;
  g.features.assign(static_cast<size_t>(g.num_nodes * g.feat_dim), 0.0f);
  for (float& x : g.features) {
    if (rng() % 50 == 0) x = value(rng);
  }
}

// Turns the generated single-label graph into a multi-label one: each node keeps its class and
// gets each other class with probability 1/4.
void make_multilabel(Graph& g) {
  std::mt19937_64 rng(17);
  g.multilabel = true;
  g.multilabels.assign(static_cast<size_t>(g.num_nodes * g.num_classes), 0);
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t c = 0; c < g.num_classes; ++c) {
      g.multilabels[v * g.num_classes + c] = c == g.labels[v] || rng() % 4 == 0;
    }
  }
  g.labels.clear();
}

TrainerOptions trainer_options(const TrainingCase& c) {
  TrainerOptions opt;
  opt.model.type = c.type;
  opt.model.layers = 3;
  opt.model.hidden = 8;
  opt.model.dropout = 0.5;
  opt.model.layer_norm = c.layer_norm;
  opt.lr = 0.01;
  opt.weight_decay = 5e-4;
  opt.seed = 3;
  return opt;
}

class DistTraining : public ::testing::TestWithParam<TrainingCase> {};

TEST_P(DistTraining, RanksAgreeAndMatchSingleWorker) {
  const TrainingCase c = GetParam();
  const std::unique_ptr<Communicator> world = test::world_comm();
  const std::unique_ptr<Communicator> self = make_mpi_communicator(MPI_COMM_SELF, 60.0);
  Graph g = test::small_graph(220, 6);
  if (c.multilabel) make_multilabel(g);
  if (c.sparse_input) make_sparse_features(g);
  PartitionOptions popt;
  popt.parts = world->size();
  const std::vector<int32_t> owner = assign_parts(g, popt);

  Trainer dist(build_part(g, owner, world->rank()), *world, trainer_options(c));
  TrainerOptions dense = trainer_options(c);
  dense.sparse_features = false;
  Trainer single(build_part(g, std::vector<int32_t>(owner.size(), 0), 0), *self, dense);
  EXPECT_EQ(dist.sparse_layer_input() != nullptr, c.sparse_input);
  EXPECT_EQ(single.sparse_layer_input(), nullptr);
  ASSERT_EQ(dist.num_parameters(), single.num_parameters());
  const size_t n = static_cast<size_t>(dist.num_parameters());

  for (int epoch = 1; epoch <= 3; ++epoch) {
    const EpochStats sd = dist.train_epoch(epoch);
    const EpochStats ss = single.train_epoch(epoch);
    EXPECT_NEAR(sd.loss, ss.loss, 1e-5 * std::max(1.0, std::abs(ss.loss))) << "epoch " << epoch;
    if (world->size() > 1) {
      EXPECT_GT(sd.bytes_sent, 0);
    }

    const std::vector<float> mine = dist.parameter_values();
    std::vector<float> all(n * static_cast<size_t>(world->size()));
    world->allgather(mine.data(), all.data(), n * sizeof(float));
    for (int r = 0; r < world->size(); ++r) {
      ASSERT_TRUE(std::equal(mine.begin(), mine.end(), all.begin() + r * n))
          << "rank " << r << " holds other parameters after epoch " << epoch;
    }
    const std::vector<float> ref = single.parameter_values();
    for (size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(mine[i], ref[i], 1e-5 * std::max(1.0f, std::abs(ref[i])))
          << "parameter " << i << " after epoch " << epoch;
    }
  }
  const EvalScores ed = dist.evaluate(), es = single.evaluate();
  // Identical up to a prediction flipped by summation order (a couple of nodes at most).
  EXPECT_NEAR(ed.train, es.train, 0.02);
  EXPECT_NEAR(ed.valid, es.valid, 0.02);
  EXPECT_NEAR(ed.test, es.test, 0.02);
  EXPECT_EQ(dist.metric_name(), c.multilabel ? "f1_micro" : "accuracy");
}

// The gradient all-reduce moves one flat buffer in place: after every step each parameter's
// gradient is a view of the same storage, back to back in parameter order, and it holds the sum
// over the ranks: identical on every rank and equal, up to summation order, to the gradient of
// single-worker training of the same model (an average, or a rank left out, fails here directly,
// not only through the parameters it leads to).
TEST(DistTrainingGradients, AreViewsOfOneFlatBufferHoldingTheSum) {
  const std::unique_ptr<Communicator> world = test::world_comm();
  const std::unique_ptr<Communicator> self = make_mpi_communicator(MPI_COMM_SELF, 60.0);
  const Graph g = test::small_graph(150, 8);
  PartitionOptions popt;
  popt.parts = world->size();
  const TrainingCase c{ModelType::kSage, true, false};
  Trainer t(build_part(g, assign_parts(g, popt), world->rank()), *world, trainer_options(c));
  Trainer single(build_part(g, std::vector<int32_t>(static_cast<size_t>(g.num_nodes), 0), 0), *self,
                 trainer_options(c));
  for (int epoch = 1; epoch <= 2; ++epoch) {
    t.train_epoch(epoch);
    single.train_epoch(epoch);
    std::vector<float> ref;
    float scale = 0;
    for (const at::Tensor& p : single.model().parameters()) {
      const at::Tensor gr = p.grad().contiguous();
      ref.insert(ref.end(), gr.data_ptr<float>(), gr.data_ptr<float>() + gr.numel());
      scale = std::max(scale, gr.abs().max().item<float>());
    }
    ASSERT_GT(scale, 0.0f);
    const std::vector<at::Tensor> params = t.model().parameters();
    ASSERT_FALSE(params.empty());
    const void* storage = params.front().grad().storage().data();
    int64_t offset = 0;
    std::vector<float> grads;
    for (const at::Tensor& p : params) {
      ASSERT_TRUE(p.grad().defined());
      EXPECT_EQ(p.grad().storage().data(), storage) << "epoch " << epoch;
      EXPECT_EQ(p.grad().storage_offset(), offset) << "epoch " << epoch;
      offset += p.numel();
      const at::Tensor c = p.grad().contiguous();
      grads.insert(grads.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    std::vector<float> all(grads.size() * static_cast<size_t>(world->size()));
    world->allgather(grads.data(), all.data(), grads.size() * sizeof(float));
    for (int r = 0; r < world->size(); ++r) {
      ASSERT_TRUE(std::equal(grads.begin(), grads.end(), all.begin() + r * grads.size()))
          << "rank " << r << " holds other gradients after epoch " << epoch;
    }
    ASSERT_EQ(grads.size(), ref.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      ASSERT_NEAR(grads[i], ref[i], 1e-5f * scale) << "gradient " << i << " after epoch " << epoch
                                                   << " (single-worker scale " << scale << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DistTraining,
                         ::testing::Values(TrainingCase{ModelType::kGcn, true, false},
                                           TrainingCase{ModelType::kSage, false, false},
                                           TrainingCase{ModelType::kGcn, false, true},
                                           TrainingCase{ModelType::kGcn, false, false, true},
                                           TrainingCase{ModelType::kSage, false, false, true}),
                         [](const auto& info) {
                           return std::string(to_string(info.param.type)) +
                                  (info.param.layer_norm ? "_ln" : "") +
                                  (info.param.multilabel ? "_multilabel" : "") +
                                  (info.param.sparse_input ? "_sparse_input" : "");
                         });

}  // namespace
}  // namespace adaqp
