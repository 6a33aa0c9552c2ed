// Checkpoints (train/checkpoint.h) and divergence detection (train/finite_check.h) on a small
// two-layer module and libtorch's Adam.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/train/checkpoint.h"
#include "adaqp/train/finite_check.h"
#include "array_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

struct TinyNet : torch::nn::Module {
  explicit TinyNet(int64_t hidden) {
    first = register_module("first", torch::nn::Linear(4, hidden));
    second = register_module("second", torch::nn::Linear(hidden, 3));
  }
  at::Tensor forward(const at::Tensor& x) { return second->forward(at::relu(first->forward(x))); }
  torch::nn::Linear first{nullptr}, second{nullptr};
};

// Seeds libtorch's generator, then passes `hidden` on (to seed before a member's construction).
int64_t seeded(uint64_t seed, int64_t hidden) {
  torch::manual_seed(seed);
  return hidden;
}

// A model and its optimiser, parameters drawn from `seed`.
struct Trained {
  explicit Trained(uint64_t seed, int64_t hidden = 5) : net(seeded(seed, hidden)) {
    adam = std::make_unique<torch::optim::Adam>(net.parameters(),
                                                torch::optim::AdamOptions(0.05).weight_decay(1e-3));
  }
  // One Adam step on a fixed regression problem.
  void step() {
    const at::Tensor x = at::arange(20, at::kFloat).view({5, 4}).sin();
    const at::Tensor y = at::arange(15, at::kFloat).view({5, 3}).cos();
    adam->zero_grad();
    const at::Tensor loss = (net.forward(x) - y).pow(2).mean();
    loss.backward();
    adam->step();
  }
  std::vector<float> values() const {
    std::vector<float> out;
    for (const at::Tensor& p : net.parameters()) {
      const at::Tensor c = p.detach().contiguous();
      out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return out;
  }
  TinyNet net;
  std::unique_ptr<torch::optim::Adam> adam;
};

CheckpointHeader header() {
  CheckpointHeader h;
  h.dataset_fingerprint = "abc123";
  h.model_type = "gcn";
  h.layers = 2;
  h.hidden = 5;
  h.in_dim = 4;
  h.out_dim = 3;
  h.world_size = 3;
  h.seed = 7;
  h.metric = "f1_micro";
  return h;
}

CheckpointProgress progress(int epoch) {
  CheckpointProgress p;
  p.epoch = epoch;
  p.have_best = true;
  p.best_val = 0.625;
  p.test_at_best_val = 0.5;
  p.best_epoch = epoch > 1 ? epoch - 1 : epoch;
  return p;
}

// Saves `a` at `path` as a checkpoint of header() and progress(epoch); returns its arrays, for a
// test to edit.
test::Arrays saved_arrays(const std::string& path, const Trained& a, int epoch) {
  save_checkpoint(path, header(), progress(epoch), a.net, *a.adam);
  return test::read_all(path);
}

// `a` (stepped once) saved at `path` as saved_arrays does, and at `old` as a file written before
// `array` was recorded: the same arrays but that one.
void save_with_and_without(const std::string& path, const std::string& old, const Trained& a,
                           const std::string& array) {
  test::Arrays arrays = saved_arrays(path, a, 1);
  ASSERT_EQ(arrays.erase(array), 1u) << "the file records " << array;
  test::write_all(old, arrays);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(Checkpoint, ResumedTrainingIsBitwiseTheUninterruptedOne) {
  test::TempDir dir;
  Trained a(1);
  for (int i = 0; i < 3; ++i) a.step();
  const std::string path = checkpoint_path(dir.str(), 3);
  EXPECT_EQ(std::filesystem::path(path).filename(), "ckpt-000003.bin");
  save_checkpoint(path, header(), progress(3), a.net, *a.adam);

  Trained b(2);  // other initial values, no optimiser state yet
  ASSERT_NE(a.values(), b.values());
  const CheckpointProgress p = load_checkpoint(path, header(), b.net, *b.adam);
  EXPECT_EQ(p.epoch, 3);
  EXPECT_TRUE(p.have_best);
  EXPECT_EQ(p.best_val, 0.625);
  EXPECT_EQ(p.test_at_best_val, 0.5);
  EXPECT_EQ(p.best_epoch, 2);
  EXPECT_EQ(a.values(), b.values());
  for (int i = 0; i < 4; ++i) {
    a.step();
    b.step();
    ASSERT_EQ(a.values(), b.values()) << "after resumed step " << i + 1;
  }
}

TEST(Checkpoint, HeaderRoundTripsAndMismatchesNameFieldAndBothValues) {
  test::TempDir dir;
  Trained a(1);
  a.step();
  const std::string path = dir.str("c.bin");
  CheckpointHeader h = header();
  h.rank = 0;
  h.seed = std::numeric_limits<uint64_t>::max();
  save_checkpoint(path, h, progress(1), a.net, *a.adam);
  const CheckpointInfo info = read_checkpoint_info(path);
  EXPECT_EQ(info.header.dataset_fingerprint, "abc123");
  EXPECT_EQ(info.header.model_type, "gcn");
  EXPECT_EQ(info.header.hidden, 5);
  EXPECT_EQ(info.header.world_size, 3);
  EXPECT_EQ(info.header.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(info.header.metric, "f1_micro");
  EXPECT_EQ(info.progress.epoch, 1);

  struct Case {
    void (*change)(CheckpointHeader&);
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](CheckpointHeader& e) { e.dataset_fingerprint = "zzz"; },
       "dataset fingerprint: checkpoint has abc123, this job has zzz"},
      {[](CheckpointHeader& e) { e.model_type = "sage"; },
       "model.type: checkpoint has gcn, this job has sage"},
      {[](CheckpointHeader& e) { e.layers = 3; }, "model.layers: checkpoint has 2, this job has 3"},
      {[](CheckpointHeader& e) { e.hidden = 6; }, "model.hidden: checkpoint has 5, this job has 6"},
      {[](CheckpointHeader& e) { e.in_dim = 9; },
       "model input dimension (dataset features): checkpoint has 4, this job has 9"},
      {[](CheckpointHeader& e) { e.out_dim = 2; },
       "model output dimension (dataset classes): checkpoint has 3, this job has 2"},
      {[](CheckpointHeader& e) { e.layer_norm = true; },
       "model.layer_norm: checkpoint has false, this job has true"},
      {[](CheckpointHeader& e) { e.heads = 4; }, "model.heads: checkpoint has 1, this job has 4"},
      {[](CheckpointHeader& e) { e.num_bases = 2; },
       "model.num_bases: checkpoint has 0, this job has 2"},
      {[](CheckpointHeader& e) { e.seed = 7; },
       "training.seed: checkpoint has 18446744073709551615, this job has 7"},
      {[](CheckpointHeader& e) { e.metric = "rocauc"; },
       "training.metric: checkpoint has f1_micro, this job has rocauc"},
  };
  const std::vector<float> before = Trained(2).values();
  for (const Case& c : cases) {
    CheckpointHeader expected = h;
    c.change(expected);
    Trained b(2);
    const std::string msg =
        test::error_of<InputError>([&] { load_checkpoint(path, expected, b.net, *b.adam); });
    EXPECT_TRUE(test::contains(msg, path + ": " + c.expected)) << msg;
    EXPECT_EQ(b.values(), before) << "a refused checkpoint must change nothing";
  }
  CheckpointHeader other_rank = h;
  other_rank.rank = 2;  // the writer's rank is not compared
  Trained b(2);
  EXPECT_NO_THROW(load_checkpoint(path, other_rank, b.net, *b.adam));
  CheckpointHeader other_world = h;
  other_world.world_size = 4;  // nor the writer's world size: a checkpoint resumes on any W
  Trained c(2);
  EXPECT_NO_THROW(load_checkpoint(path, other_world, c.net, *c.adam));
  // Nor, with one layer (nothing to normalise), layer_norm: earlier files of one layer may
  // record it set, which a job can no longer ask for.
  CheckpointHeader one_layer = h, one_layer_norm = h;
  one_layer.layers = one_layer_norm.layers = 1;
  one_layer_norm.layer_norm = true;
  EXPECT_NO_THROW(check_job_header(path, one_layer_norm, one_layer));
  EXPECT_TRUE(
      test::contains(test::error_of<InputError>([&] { check_job_header(path, one_layer_norm, h); }),
                     "model.layers: checkpoint has 1, this job has 2"));
}

// A file written before model.heads or model.num_bases was recorded (no header/model_heads,
// header/model_num_bases) still loads: that field is not compared (the parameters' shapes and names
// are); a file that records it is refused another value.
TEST(Checkpoint, FileWithoutHeadsOrBasesLoadsWithoutComparingThem) {
  struct Field {
    const char* array;
    int64_t CheckpointHeader::*field;
    int64_t absent, other;
    const char* refused;
  };
  const Field fields[] = {
      {"header/model_heads", &CheckpointHeader::heads, 0, 4,
       "model.heads: checkpoint has 1, this job has 4"},
      {"header/model_num_bases", &CheckpointHeader::num_bases, -1, 3,
       "model.num_bases: checkpoint has 0, this job has 3"},
  };
  for (const Field& f : fields) {
    SCOPED_TRACE(f.array);
    test::TempDir dir;
    Trained a(1);
    a.step();
    const std::string path = dir.str("c.bin"), old = dir.str("old.bin");
    save_with_and_without(path, old, a, f.array);
    EXPECT_EQ(read_checkpoint_info(old).header.*f.field, f.absent);
    CheckpointHeader other = header();
    other.*f.field = f.other;
    Trained b(2);
    EXPECT_NO_THROW(load_checkpoint(old, other, b.net, *b.adam));
    EXPECT_EQ(a.values(), b.values());
    const std::string error =
        test::error_of<InputError>([&] { load_checkpoint(path, other, b.net, *b.adam); });
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find(f.refused), std::string::npos) << error;
  }
}

// A file written before the metric was recorded (no header/metric) was scored as auto scores
// (accuracy or F1-micro): it resumes with either, and its best score is refused to a rocauc job.
TEST(Checkpoint, FileWithoutMetricResumesAsAutoScoredItNotAsRocAuc) {
  test::TempDir dir;
  Trained a(1);
  a.step();
  const std::string path = dir.str("c.bin"), old = dir.str("old.bin");
  save_with_and_without(path, old, a, "header/metric");
  EXPECT_EQ(read_checkpoint_info(old).header.metric, "");
  for (const char* metric : {"accuracy", "f1_micro"}) {
    CheckpointHeader expected = header();
    expected.metric = metric;
    Trained b(2);
    EXPECT_NO_THROW(load_checkpoint(old, expected, b.net, *b.adam)) << metric;
    EXPECT_EQ(a.values(), b.values());
  }
  CheckpointHeader rocauc = header();
  rocauc.metric = "rocauc";
  Trained c(2);
  const std::string error =
      test::error_of<InputError>([&] { load_checkpoint(old, rocauc, c.net, *c.adam); });
  EXPECT_TRUE(test::contains(error, old + ": training.metric: checkpoint was scored by accuracy or "
                                          "f1_micro"))
      << error;
}

// Files written before the best epoch was recorded read it as their own epoch (early stopping then
// counts from there); a recorded one outside 1..epoch is a clear error.
TEST(Checkpoint, BestEpochOfOlderFilesIsTheirEpochAndOutOfRangeIsNamed) {
  test::TempDir dir;
  Trained a(1);
  a.step();
  const std::string path = dir.str("c.bin"), old = dir.str("old.bin"), bad = dir.str("bad.bin");
  save_checkpoint(path, header(), progress(5), a.net, *a.adam);
  EXPECT_EQ(read_checkpoint_info(path).progress.best_epoch, 4);
  test::Arrays arrays = test::read_all(path);
  ASSERT_EQ(arrays.erase("progress/best_epoch"), 1u) << "the file records the best epoch";
  test::write_all(old, arrays);
  EXPECT_EQ(read_checkpoint_info(old).progress.best_epoch, 5);
  EXPECT_FALSE(read_checkpoint_info(old).progress.best_epoch_recorded);
  EXPECT_TRUE(read_checkpoint_info(path).progress.best_epoch_recorded);
  CheckpointProgress late = progress(5);
  late.best_epoch = 6;
  save_checkpoint(bad, header(), late, a.net, *a.adam);
  const std::string msg = test::error_of<InputError>([&] { read_checkpoint_info(bad); });
  EXPECT_TRUE(test::contains(msg, bad) && test::contains(msg, "progress/best_epoch") &&
              test::contains(msg, "epoch 6 outside 1..5"))
      << msg;
}

TEST(Checkpoint, CorruptTruncatedAndForeignFilesAreClearErrors) {
  test::TempDir dir;
  Trained a(1);
  a.step();
  const std::string path = dir.str("c.bin");
  save_checkpoint(path, header(), progress(1), a.net, *a.adam);
  const std::string good = read_file(path);
  const std::vector<float> before = Trained(2).values();
  auto load = [&] {
    Trained b(2);
    const std::string msg =
        test::error_of<InputError>([&] { load_checkpoint(path, header(), b.net, *b.adam); });
    EXPECT_EQ(b.values(), before);
    return msg;
  };

  std::string flipped = good;
  flipped[good.size() - 3] = static_cast<char>(flipped[good.size() - 3] ^ 0x40);
  write_file(path, flipped);
  EXPECT_TRUE(test::contains(load(), "checksum")) << load();

  write_file(path, good.substr(0, good.size() / 2));
  std::string msg = load();
  EXPECT_TRUE(test::contains(msg, path)) << msg;
  EXPECT_TRUE(test::contains(msg, "truncated")) << msg;

  write_file(path, "not a checkpoint at all");
  msg = load();
  EXPECT_TRUE(test::contains(msg, path)) << msg;
  EXPECT_TRUE(test::contains(msg, "bad magic")) << msg;

  std::filesystem::remove(path);
  msg = load();
  EXPECT_TRUE(test::contains(msg, path)) << msg;
  EXPECT_TRUE(test::contains(msg, "cannot open: No such file")) << msg;

  CheckpointHeader future = header();
  future.format_version = kCheckpointFormatVersion + 1;
  save_checkpoint(path, future, progress(1), a.net, *a.adam);
  EXPECT_TRUE(
      test::contains(load(), "format version 2 is not supported (this build reads version 1)"))
      << load();
}

// A model whose second layer has another name: the same header, another structure (as R-GCN's
// bases are to its per-relation weights).
struct RenamedNet : torch::nn::Module {
  RenamedNet() {
    first = register_module("first", torch::nn::Linear(4, 5));
    third = register_module("third", torch::nn::Linear(5, 3));
  }
  torch::nn::Linear first{nullptr}, third{nullptr};
};

// Models the header cannot tell apart: a parameter of another shape is named with both shapes, one
// missing with the parameters the checkpoint holds instead.
TEST(Checkpoint, ParameterOfAnotherShapeOrMissingIsNamed) {
  test::TempDir dir;
  Trained a(1, 5);
  a.step();
  const std::string path = dir.str("c.bin");
  save_checkpoint(path, header(), progress(1), a.net, *a.adam);
  Trained wider(2, 6);
  const std::string shape =
      test::error_of<InputError>([&] { load_checkpoint(path, header(), wider.net, *wider.adam); });
  EXPECT_TRUE(test::contains(
      shape, "shape/first.weight: checkpoint has shape [5, 4], the model has [6, 4]"))
      << shape;
  RenamedNet other;
  torch::optim::Adam adam(other.parameters(), torch::optim::AdamOptions(0.05));
  const std::string missing =
      test::error_of<InputError>([&] { load_checkpoint(path, header(), other, adam); });
  EXPECT_TRUE(test::contains(missing,
                             "param/third.weight: parameter missing from the checkpoint, "
                             "which holds second.bias, second.weight instead"))
      << missing;
}

TEST(Checkpoint, ParameterThatIsNotFiniteIsNamed) {
  test::TempDir dir;
  Trained a(1);
  a.step();
  {
    torch::NoGradGuard no_grad;
    a.net.parameters()[0].view(-1)[3] = std::numeric_limits<float>::quiet_NaN();
  }
  const std::string path = dir.str("c.bin");
  save_checkpoint(path, header(), progress(1), a.net, *a.adam);
  Trained b(2);
  const std::string msg =
      test::error_of<InputError>([&] { load_checkpoint(path, header(), b.net, *b.adam); });
  EXPECT_TRUE(test::contains(msg, path + ": param/first.weight index 3: value nan is not finite"))
      << msg;
}

// Values no run writes, each edited into an otherwise valid file (checksums rewritten): an epoch
// beyond int (not narrowed into range first), a best score outside [0, 1] (NaN among them) or a
// flag that is not 0 or 1 (the best flag, the learned rows'), a rank outside the world, and a
// negative Adam second moment (Adam would take its square root) are named with their value; a file
// of each reads back unedited.
TEST(Checkpoint, ValuesNoRunWritesAreNamedWithTheirValue) {
  test::TempDir dir;
  Trained a(1);
  a.step();
  const std::string good = dir.str("good.bin"), path = dir.str("c.bin");
  const test::Arrays arrays = saved_arrays(good, a, 4);
  const auto edited = [&](const std::string& name, const test::Array& values) {
    test::Arrays copy = arrays;
    ASSERT_EQ(copy.count(name), 1u) << name;
    copy[name] = values;
    test::write_all(path, copy);
  };
  const auto info_error = [&] {
    return test::error_of<InputError>([&] { read_checkpoint_info(path); });
  };
  const auto load_error = [&] {
    Trained b(2);
    return test::error_of<InputError>([&] { load_checkpoint(path, header(), b.net, *b.adam); });
  };
  edited("header/format_version", std::vector<int64_t>{(int64_t{1} << 32) + 1});
  EXPECT_TRUE(test::contains(info_error(), "format version 4294967297 is not supported"))
      << info_error();
  edited("progress/epoch", std::vector<int64_t>{(int64_t{1} << 32) + 4});
  EXPECT_TRUE(
      test::contains(info_error(), "progress/epoch: epoch 4294967300 outside 1..2147483647"))
      << info_error();
  edited("progress/best", std::vector<double>{1, std::nan(""), 0.5});
  EXPECT_TRUE(
      test::contains(info_error(), "progress/best index 1: value nan is not a score in [0, 1]"))
      << info_error();
  edited("progress/best", std::vector<double>{1, 0.6, 7.5});
  EXPECT_TRUE(
      test::contains(info_error(), "progress/best index 2: value 7.5 is not a score in [0, 1]"))
      << info_error();
  edited("header/embedding", std::vector<int64_t>{7});
  EXPECT_TRUE(test::contains(info_error(), "header/embedding index 0: value 7 is not 0 or 1"))
      << info_error();
  edited("progress/best", std::vector<double>{2, 0.6, 0.5});
  EXPECT_TRUE(test::contains(info_error(), "progress/best index 0: value 2 is not 0 or 1"))
      << info_error();
  edited("header/world", std::vector<int64_t>{3, 3});
  EXPECT_TRUE(test::contains(info_error(), "header/world: rank 3 of 3 workers")) << info_error();
  // Not text: named by position, the escape byte not printed to the terminal.
  edited("header/model_type", std::vector<uint8_t>{'g', 0x1b, 'n'});
  EXPECT_TRUE(
      test::contains(info_error(), "array 'header/model_type': byte 1 of 3 is 0x1b, not text"))
      << info_error();
  EXPECT_FALSE(test::contains(info_error(), "\x1b")) << info_error();
  // One optimizer step an epoch: a file of epoch 4 holds at most 4.
  edited("adam/first.weight/step", std::vector<int64_t>{5});
  EXPECT_TRUE(test::contains(load_error(), path + ": adam/first.weight/step: step 5 outside 1..4"))
      << load_error();
  std::vector<float> second =
      std::get<std::vector<float>>(arrays.at("adam/first.weight/exp_avg_sq"));
  second[2] = -1;
  edited("adam/first.weight/exp_avg_sq", second);
  EXPECT_TRUE(test::contains(load_error(), path +
                                               ": adam/first.weight/exp_avg_sq index 2: value -1 "
                                               "is negative"))
      << load_error();
  Trained b(2);
  EXPECT_EQ(load_checkpoint(good, header(), b.net, *b.adam).epoch, 4);
  EXPECT_EQ(b.values(), a.values());
}

TEST(Checkpoint, LatestSkipsDamagedFilesAndPruneKeepsTheNewest) {
  test::TempDir dir;
  const std::string d = dir.str("ckpt");
  EXPECT_TRUE(list_checkpoints(d).empty());
  EXPECT_EQ(latest_checkpoint(d), "");
  std::filesystem::create_directories(d);
  Trained a(1);
  for (int epoch : {2, 4, 6}) {
    a.step();
    save_checkpoint(checkpoint_path(d, epoch), header(), progress(epoch), a.net, *a.adam);
  }
  write_file(d + "/ckpt-000008.bin.tmp-123", "partial");  // an interrupted write
  write_file(d + "/ckpt-12.bin", "");                     // not a name the writer produces
  write_file(d + "/ckpt-0000010.bin", "");                // nor this one (epoch 10's has 6 digits)
  write_file(d + "/ckpt-00001a.bin", "");
  EXPECT_EQ(list_checkpoints(d), (std::vector<int>{6, 4, 2}));
  EXPECT_EQ(latest_checkpoint(d), checkpoint_path(d, 6));

  const std::string newest = read_file(checkpoint_path(d, 6));
  write_file(checkpoint_path(d, 6), newest.substr(0, newest.size() - 10));
  EXPECT_EQ(latest_checkpoint(d), checkpoint_path(d, 4));
  // Intact, but recording another epoch than its name's (epoch 4's file named for 5).
  write_file(checkpoint_path(d, 5), read_file(checkpoint_path(d, 4)));
  EXPECT_EQ(latest_checkpoint(d), checkpoint_path(d, 4));
  std::filesystem::remove(checkpoint_path(d, 5));

  // A damaged file named for a later epoch than the one written (skipped by the resume) is neither
  // deleted nor counted among the two kept.
  write_file(checkpoint_path(d, 9), "damaged");
  prune_checkpoints(d, 2, 6);
  EXPECT_EQ(list_checkpoints(d), (std::vector<int>{9, 6, 4}));
  // ... nor once the run has passed its epoch: resumed from 4 past the damaged 6 and 9, a run
  // writing 10 keeps the intact 4 beside it (counted, 9 and 6 had left 10 the only intact one).
  a.step();
  save_checkpoint(checkpoint_path(d, 10), header(), progress(10), a.net, *a.adam);
  prune_checkpoints(d, 2, 10, {6, 9});
  EXPECT_EQ(list_checkpoints(d), (std::vector<int>{10, 9, 6, 4}));
  prune_checkpoints(d, 2, 10);
  EXPECT_EQ(list_checkpoints(d), (std::vector<int>{10, 9}));
  EXPECT_TRUE(std::filesystem::exists(d + "/ckpt-000008.bin.tmp-123"));

  // A directory of a checkpoint's name: no checkpoint could be written there; named at once.
  std::filesystem::create_directory(checkpoint_path(d, 8));
  EXPECT_TRUE(test::contains(
      test::error_of<InputError>([&] { list_checkpoints(d); }),
      checkpoint_path(d, 8) + ": is not a regular file, where a checkpoint belongs"));
}

// Checksums cover the payloads only: a damaged array name or element type is found by arrays that
// do not fit together, so that the file is skipped for an older intact one, as a payload's damage
// is (not a resume that stops on "parameter missing").
TEST(Checkpoint, LatestSkipsFilesWhoseArraysDoNotFitTogether) {
  test::TempDir dir;
  const std::string d = dir.str();
  Trained a(1);
  a.step();
  save_checkpoint(checkpoint_path(d, 4), header(), progress(4), a.net, *a.adam);
  const std::string newest = checkpoint_path(d, 6);
  const test::Arrays intact = saved_arrays(newest, a, 6);
  const auto renamed = [&](const std::string& from, const std::string& to) {
    test::Arrays e = intact;
    e[to] = e.at(from);
    e.erase(from);
    return e;
  };
  std::vector<std::pair<test::Arrays, std::string>> damaged = {
      {renamed("param/first.weight", "param/first.weighs"),
       "array 'adam/first.weight/exp_avg': belongs to parameter 'first.weight', of which the file "
       "has no param/ and shape/ array"},
      {renamed("shape/second.bias", "shape/second.bian"),
       "array 'adam/second.bias/exp_avg': belongs to parameter 'second.bias'"},
      {renamed("adam/first.bias/exp_avg", "adam/first.bias/exp_avh"),
       "array 'adam/first.bias/exp_avg_sq': Adam's state of 'first.bias' is incomplete"},
      {renamed("adam/first.bias/step", "adam/first.bias/dtep"),
       "array 'adam/first.bias/dtep': is not an array a checkpoint holds"},
      {renamed("adam/first.bias/exp_avg", "adam/first.bian/exp_avg"),
       "array 'adam/first.bian/exp_avg': belongs to parameter 'first.bian'"},
      {renamed("header/model_heads", "header/model_headt"),
       "array 'header/model_headt': is not an array a checkpoint holds"},
  };
  test::Arrays retyped = intact;
  retyped["param/second.bias"] = std::vector<int32_t>(3, 0);
  damaged.emplace_back(retyped, "array 'param/second.bias': has another element type");
  test::Arrays shorter = intact;
  std::get<std::vector<float>>(shorter["adam/second.weight/exp_avg"]).pop_back();
  damaged.emplace_back(shorter, "array 'adam/second.weight/exp_avg': 14 values, expected 15");
  test::Arrays stepless = intact;
  stepless.erase("adam/first.weight/step");
  damaged.emplace_back(stepless,
                       "array 'adam/first.weight/exp_avg': Adam's state of 'first.weight' is "
                       "incomplete");
  for (const auto& [arrays, expected] : damaged) {
    test::write_all(newest, arrays);
    EXPECT_TRUE(test::contains(test::error_of<InputError>([&] { read_checkpoint_info(newest); }),
                               newest + ": " + expected))
        << expected;
    EXPECT_EQ(latest_checkpoint(d), checkpoint_path(d, 4)) << expected;
  }
  // A file written before Adam's first step has no adam/ arrays, and reads.
  test::Arrays unstepped = intact;
  for (auto it = unstepped.begin(); it != unstepped.end();)
    it = it->first.rfind("adam/", 0) == 0 ? unstepped.erase(it) : std::next(it);
  test::write_all(newest, unstepped);
  EXPECT_EQ(latest_checkpoint(d), newest);
}

// The checkpoint of the learned-row tests, and its graph's node count.
const EmbeddingOrigin kOrigin{"00112233445566778899aabbccddeeff", 7, 3};
constexpr int64_t kNodes = 10;

// Learned rows owned by ranks: `gids` rows of 3 columns, values gid + column / 10, one Adam step
// (its state then depends on the values only, row by row).
struct OwnedRows {
  explicit OwnedRows(std::vector<int64_t> ids)
      : gids(std::move(ids)), rows(at::empty({static_cast<int64_t>(gids.size()), 3})) {
    for (size_t k = 0; k < gids.size(); ++k) {
      for (int64_t c = 0; c < 3; ++c)
        rows[static_cast<int64_t>(k)][c] = static_cast<float>(gids[k]) + static_cast<float>(c) / 10;
    }
    rows.requires_grad_(true);
    adam = std::make_unique<torch::optim::Adam>(std::vector<at::Tensor>{rows},
                                                torch::optim::AdamOptions(0.05));
  }
  void step() {
    adam->zero_grad();
    rows.pow(2).sum().backward();
    adam->step();
  }
  // Row of node `gid`'s values, and of its Adam exp_avg.
  std::vector<float> row(int64_t gid, bool exp_avg = false) const {
    const auto at = std::find(gids.begin(), gids.end(), gid) - gids.begin();
    at::Tensor all = rows.detach();
    if (exp_avg) {
      all = dynamic_cast<const torch::optim::AdamParamState&>(
                *adam->state().at(rows.unsafeGetTensorImpl()))
                .exp_avg();
    }
    const at::Tensor r = all[at].contiguous();
    return {r.data_ptr<float>(), r.data_ptr<float>() + 3};
  }
  std::vector<int64_t> gids;
  at::Tensor rows;
  std::unique_ptr<torch::optim::Adam> adam;
};

// Rows written by two ranks come back, values and Adam state, on a rank that owns some of each
// (in another order); a node in neither file, rows of another width, Adam steps that disagree and a
// missing file are clear errors; pruning deletes a checkpoint's embedding files with it.
TEST(Checkpoint, EmbeddingRowsComeBackByNodeOnAnyRank) {
  test::TempDir tmp;
  const std::string ckpt = checkpoint_path(tmp.str(), 3);
  EXPECT_EQ(embedding_path(ckpt, 1), tmp.str("ckpt-000003.emb-0001.bin"));
  OwnedRows a({4, 0, 7}), b({2, 9});
  a.step();
  b.step();
  save_embedding_rows(embedding_path(ckpt, 0), kOrigin, a.gids, a.rows, *a.adam);
  save_embedding_rows(embedding_path(ckpt, 1), kOrigin, b.gids, b.rows, *b.adam);
  OwnedRows c({9, 4, 2});
  load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows, *c.adam);
  for (const int64_t gid : {9, 2}) {
    EXPECT_EQ(c.row(gid), b.row(gid)) << gid;
    EXPECT_EQ(c.row(gid, true), b.row(gid, true)) << gid;
  }
  EXPECT_EQ(c.row(4), a.row(4));
  EXPECT_EQ(c.row(4, true), a.row(4, true));
  // Both go on alike from there.
  c.step();
  a.step();
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(c.row(4)[k], a.row(4)[k], 1e-6);

  OwnedRows missing({9, 5});
  EXPECT_TRUE(test::contains(
      test::error_of<InputError>([&] {
        load_embedding_rows(ckpt, 2, kOrigin, kNodes, missing.gids, missing.rows, *missing.adam);
      }),
      "node 5's embedding row is in none of the checkpoint's 2 embedding files"));
  EXPECT_EQ(missing.row(9), OwnedRows({9}).row(9)) << "nothing changed on error";
  EXPECT_TRUE(test::contains(test::error_of<InputError>([&] {
                               load_embedding_rows(ckpt, 3, kOrigin, kNodes, c.gids, c.rows,
                                                   *c.adam);
                             }),
                             "ckpt-000003.emb-0002.bin"));
  OwnedRows stepped_twice({2, 9});
  stepped_twice.step();
  stepped_twice.step();
  save_embedding_rows(embedding_path(ckpt, 1), kOrigin, stepped_twice.gids, stepped_twice.rows,
                      *stepped_twice.adam);
  EXPECT_TRUE(test::contains(test::error_of<InputError>([&] {
                               load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows,
                                                   *c.adam);
                             }),
                             "embedding/adam_step: Adam state unlike"));
  // A node id that is negative, or whose row is in two files or twice in one (damage either way),
  // is named with the file that holds it.
  const std::string second = embedding_path(ckpt, 1);
  const std::pair<std::vector<int64_t>, std::string> damaged[] = {
      {{-3}, second + ": embedding/gids index 0: node id -3 is outside the graph's [0, 10)"},
      {{2, kNodes}, second + ": embedding/gids index 1: node id 10 is outside the graph's [0, 10)"},
      {{4}, second + ": embedding/gids: node 4 has a row here and in " + embedding_path(ckpt, 0)},
      {{2, 2}, second + ": embedding/gids: node 2 has a row here and again in this file"}};
  for (const auto& [ids, expected] : damaged) {
    OwnedRows rows(ids);
    rows.step();
    save_embedding_rows(second, kOrigin, rows.gids, rows.rows, *rows.adam);
    EXPECT_TRUE(test::contains(test::error_of<InputError>([&] {
                                 load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows,
                                                     *c.adam);
                               }),
                               expected));
  }
  // Rows of another checkpoint: another epoch's, run's or dataset's file copied in its place.
  for (const EmbeddingOrigin& other :
       {EmbeddingOrigin{kOrigin.dataset_fingerprint, kOrigin.seed, 2},
        EmbeddingOrigin{kOrigin.dataset_fingerprint, 8, 3},
        EmbeddingOrigin{"ffeeddccbbaa99887766554433221100", kOrigin.seed, 3}}) {
    save_embedding_rows(second, other, b.gids, b.rows, *b.adam);
    const std::string error = test::error_of<InputError>(
        [&] { load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows, *c.adam); });
    EXPECT_TRUE(test::contains(
        error, second + ": embedding/origin: is 'dataset " + other.dataset_fingerprint + ", seed " +
                   std::to_string(other.seed) + ", epoch " + std::to_string(other.epoch) +
                   "', the checkpoint's 'dataset " + kOrigin.dataset_fingerprint +
                   ", seed 7, epoch 3': learned rows of another "
                   "run, dataset or epoch"))
        << error;
  }
  save_embedding_rows(embedding_path(ckpt, 1), kOrigin, b.gids, b.rows, *b.adam);
  // The rows step with the parameters the checkpoint restored: rows one step behind them are
  // another epoch's (files of an older build, which record no origin, are caught so).
  {
    OwnedRows d({9, 4, 2});
    at::Tensor weight = torch::ones({2}, torch::requires_grad());
    d.adam->add_param_group(torch::optim::OptimizerParamGroup({weight}));
    for (int k = 0; k < 2; ++k) {
      d.adam->zero_grad();
      (d.rows.pow(2).sum() + weight.pow(2).sum()).backward();
      d.adam->step();
    }
    const std::string error = test::error_of<InputError>(
        [&] { load_embedding_rows(ckpt, 2, kOrigin, kNodes, d.gids, d.rows, *d.adam); });
    EXPECT_TRUE(test::contains(error, embedding_path(ckpt, 0) +
                                          ": embedding/adam_step: step 1, the checkpoint's "
                                          "parameters are at step 2: learned rows of another "
                                          "epoch"))
        << error;
  }
  const at::Tensor wide = at::zeros({1, 4});
  EXPECT_TRUE(test::contains(test::error_of<InputError>([&] {
                               load_embedding_rows(ckpt, 1, kOrigin, kNodes, {4}, wide, *c.adam);
                             }),
                             "the model's are 4 wide"));

  // A checkpoint with embedding rows reads back only with all its files; pruning removes them.
  Trained t(1);
  CheckpointHeader h = header();
  h.embedding = true;
  h.world_size = 2;
  save_checkpoint(ckpt, h, progress(3), t.net, *t.adam);
  EXPECT_TRUE(read_checkpoint_info(ckpt).header.embedding);
  // Rows' arrays that do not fit together (a damaged name or element type) make it unreadable.
  const test::Arrays rows_intact = test::read_all(embedding_path(ckpt, 1));
  const auto rows_edited = [&](const std::string& name, const std::string& to) {
    test::Arrays e = rows_intact;
    if (!to.empty()) e[to] = e.at(name);
    e.erase(name);
    return e;
  };
  test::Arrays rows_retyped = rows_intact;
  rows_retyped["embedding/gids"] = std::vector<int32_t>{2, 9};
  const std::pair<test::Arrays, std::string> rows_damage[] = {
      {rows_edited("embedding/exp_avg", "embedding/exp_avgx"),
       "array 'embedding/exp_avgx': is not an array of learned rows"},
      {rows_edited("embedding/exp_avg", ""), "Adam's state is incomplete"},
      {rows_edited("embedding/adam_step", ""), "Adam's moments without embedding/adam_step"},
      {rows_edited("embedding/rows", ""), "embedding/gids or embedding/rows missing"},
      {rows_retyped, "array 'embedding/gids': has another element type"}};
  for (const auto& [arrays, expected] : rows_damage) {
    test::write_all(embedding_path(ckpt, 1), arrays);
    const std::string error = test::error_of<InputError>([&] { read_checkpoint_info(ckpt); });
    EXPECT_TRUE(test::contains(error, embedding_path(ckpt, 1) + ": array '")) << error;
    EXPECT_TRUE(test::contains(error, expected)) << error;
  }
  test::write_all(embedding_path(ckpt, 1), rows_intact);
  EXPECT_TRUE(read_checkpoint_info(ckpt).header.embedding);
  std::filesystem::remove(embedding_path(ckpt, 1));
  EXPECT_THROW(read_checkpoint_info(ckpt), InputError);
  EXPECT_EQ(latest_checkpoint(tmp.str()), "");
  save_checkpoint(checkpoint_path(tmp.str(), 4), header(), progress(4), t.net, *t.adam);
  save_checkpoint(checkpoint_path(tmp.str(), 5), header(), progress(5), t.net, *t.adam);
  // Rows of a checkpoint whose rank 0 never wrote it (older than the newest: deleted), and rows of
  // one being written (newer: kept).
  const std::string orphan = embedding_path(checkpoint_path(tmp.str(), 1), 0);
  const std::string coming = embedding_path(checkpoint_path(tmp.str(), 6), 0);
  save_embedding_rows(orphan, kOrigin, a.gids, a.rows, *a.adam);
  save_embedding_rows(coming, kOrigin, a.gids, a.rows, *a.adam);
  const std::string other = tmp.str("ckpt-000001.emb-01.bin");  // not a name the writer produces
  write_file(other, "");
  prune_checkpoints(tmp.str(), 2, 5);
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_FALSE(std::filesystem::exists(ckpt));
  EXPECT_FALSE(std::filesystem::exists(embedding_path(ckpt, 0)));
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_TRUE(std::filesystem::exists(coming));
  EXPECT_TRUE(std::filesystem::exists(checkpoint_path(tmp.str(), 4)));
}

// training.restore_best: the best epoch's parameters and embedding rows come back where the files
// keep them, nothing where they do not, and a file with some parameters' but not all is an error.
TEST(Checkpoint, BestEpochParametersAndRowsComeBackWhereKept) {
  test::TempDir tmp;
  Trained a(1);
  a.step();
  ModelSnapshot kept;
  kept.epoch = 1;
  for (const at::Tensor& p : a.net.parameters()) kept.params.push_back(p.detach().clone());
  const std::vector<float> at_best = a.values();
  a.step();
  const std::string with = tmp.str("with.bin"), without = tmp.str("without.bin");
  save_checkpoint(with, header(), progress(2), a.net, *a.adam, &kept);
  save_checkpoint(without, header(), progress(2), a.net, *a.adam);

  Trained b(2);
  ModelSnapshot best;
  load_checkpoint(with, header(), b.net, *b.adam, &best);
  EXPECT_EQ(b.values(), a.values()) << "the live parameters are the last epoch's";
  ASSERT_EQ(best.params.size(), b.net.parameters().size());
  std::vector<float> loaded;
  for (const at::Tensor& p : best.params) {
    const at::Tensor c = p.contiguous();
    loaded.insert(loaded.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  EXPECT_EQ(loaded, at_best);
  load_checkpoint(without, header(), b.net, *b.adam, &best);
  EXPECT_TRUE(best.params.empty());

  test::Arrays arrays = test::read_all(with);
  ASSERT_EQ(arrays.erase("best/first.weight"), 1u);
  const std::string partial = tmp.str("partial.bin");
  test::write_all(partial, arrays);
  const std::string msg = test::error_of<InputError>(
      [&] { load_checkpoint(partial, header(), b.net, *b.adam, &best); });
  EXPECT_TRUE(test::contains(msg, "best/first.weight: missing, while other parameters")) << msg;

  const std::string ckpt = checkpoint_path(tmp.str(), 3);
  OwnedRows r0({4, 0}), r1({2});
  const at::Tensor best0 = r0.rows.detach().clone(), best1 = r1.rows.detach().clone();
  r0.step();
  r1.step();
  save_embedding_rows(embedding_path(ckpt, 0), kOrigin, r0.gids, r0.rows, *r0.adam, &best0);
  save_embedding_rows(embedding_path(ckpt, 1), kOrigin, r1.gids, r1.rows, *r1.adam, &best1);
  OwnedRows c({2, 4});
  at::Tensor rows;
  load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows, *c.adam, &rows);
  EXPECT_EQ(c.row(4), r0.row(4));
  ASSERT_TRUE(rows.defined());
  EXPECT_TRUE(at::equal(rows, at::stack({best1[0], best0[0]})));
  save_embedding_rows(embedding_path(ckpt, 1), kOrigin, r1.gids, r1.rows, *r1.adam);
  EXPECT_TRUE(test::contains(test::error_of<InputError>([&] {
                               load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows,
                                                   *c.adam, &rows);
                             }),
                             "embedding/best_rows"));
  save_embedding_rows(embedding_path(ckpt, 0), kOrigin, r0.gids, r0.rows, *r0.adam);
  load_embedding_rows(ckpt, 2, kOrigin, kNodes, c.gids, c.rows, *c.adam, &rows);
  EXPECT_FALSE(rows.defined());
}

TEST(FiniteCheck, NamesTheEpochAndTheFirstBadParameter) {
  Trained a(1);
  a.step();
  EXPECT_NO_THROW(check_finite(a.net, 0.5, 3, false));

  auto error = [&](double loss, bool first_epoch = false) {
    try {
      check_finite(a.net, loss, 3, first_epoch);
    } catch (const NumericalError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error(std::nan("")),
            "training diverged at epoch 3: the loss is nan; lower training.lr");
  EXPECT_TRUE(test::contains(error(INFINITY), "the loss is inf"));
  // A fresh run's first epoch computed its loss and gradients before any step: not the learning
  // rate.
  EXPECT_EQ(error(std::nan(""), true),
            "training diverged at epoch 3: the loss is nan; computed from the initial parameters, "
            "before any optimizer step: the input features are likely too large for float32 "
            "arithmetic (scale them down)");

  {
    // The largest finite values, whose plain sum overflows to infinity, are finite.
    at::NoGradGuard no_grad;
    a.net.second->weight.mutable_grad().fill_(std::numeric_limits<float>::max());
  }
  EXPECT_NO_THROW(check_finite(a.net, 0.5, 3, false));
  {
    at::NoGradGuard no_grad;
    a.net.second->weight.mutable_grad()[1][2] = -INFINITY;
  }
  EXPECT_EQ(error(0.5),
            "training diverged at epoch 3: the gradient of parameter 'second.weight' has 1 "
            "non-finite value(s) of 15 (first at flat index 7: -inf); lower training.lr");
  EXPECT_TRUE(test::contains(error(0.5, true), "(first at flat index 7: -inf); computed from"));
  a.adam->zero_grad();  // libtorch drops the gradients: only the parameters are left to check
  {
    at::NoGradGuard no_grad;
    a.net.first->bias[3] = std::nanf("");
  }
  EXPECT_EQ(error(0.5),
            "training diverged at epoch 3: parameter 'first.bias' has 1 non-finite value(s) of 5 "
            "(first at flat index 3: nan); lower training.lr");
  // A parameter is checked after the step: the learning rate's advice even in the first epoch.
  EXPECT_TRUE(test::contains(error(0.5, true), "(first at flat index 3: nan); lower training.lr"));
}

// A buffer the optimizer trains (the learned featureless rows, model/gnn.h: a gradient of its own)
// is checked as a parameter is; a buffer without a gradient is not.
TEST(FiniteCheck, NamesATrainedBufferAndIgnoresOthers) {
  TinyNet net(5);
  at::Tensor rows = net.register_buffer("local_embedding", at::zeros({4, 2}));
  net.register_buffer("counts", at::full({2}, std::nanf("")));
  rows.mutable_grad() = at::zeros_like(rows);
  EXPECT_NO_THROW(check_finite(net, 0.5, 7, false));
  rows.mutable_grad()[3][1] = INFINITY;
  EXPECT_EQ(test::error_of<NumericalError>([&] { check_finite(net, 0.5, 7, false); }),
            "training diverged at epoch 7: the gradient of trained buffer 'local_embedding' has 1 "
            "non-finite value(s) of 8 (first at flat index 7: inf); lower training.lr");
  rows.mutable_grad().zero_();
  rows[2][0] = std::nanf("");
  EXPECT_EQ(test::error_of<NumericalError>([&] { check_finite(net, 0.5, 7, false); }),
            "training diverged at epoch 7: trained buffer 'local_embedding' has 1 non-finite "
            "value(s) of 8 (first at flat index 4: nan); lower training.lr");
}

}  // namespace
}  // namespace adaqp
