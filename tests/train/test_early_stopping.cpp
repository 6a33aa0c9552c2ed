// training.patience's rule (train/epoch_loop.h): a run ends early after an evaluated epoch, before
// its last, at least `patience` epochs after its best validation score; a checkpoint at such an
// epoch is a finished run.
#include <gtest/gtest.h>

#include "adaqp/train/epoch_loop.h"

namespace adaqp {
namespace {

RunOptions options(int epochs, int eval_every, int patience) {
  RunOptions opt;
  opt.epochs = epochs;
  opt.eval_every = eval_every;
  opt.patience = patience;
  return opt;
}

CheckpointProgress at(int epoch, int best_epoch) {
  CheckpointProgress p;
  p.epoch = epoch;
  p.have_best = best_epoch > 0;
  p.best_epoch = best_epoch;
  return p;
}

TEST(EarlyStopping, AnEvaluatedEpochPatienceEpochsAfterTheBestBeforeTheLast) {
  struct Case {
    int epoch, best_epoch, epochs, eval_every, patience;
    bool stops;
  };
  const Case cases[] = {
      {18, 10, 100, 1, 8, true},    // exactly patience epochs after the best
      {17, 10, 100, 1, 8, false},   // one short
      {30, 10, 100, 1, 8, true},    // long after (a resume with a smaller patience)
      {18, 10, 100, 1, 0, false},   // patience 0: never
      {18, 0, 100, 1, 8, false},    // no evaluation yet, no best
      {18, 10, 100, 3, 8, true},    // 18 is evaluated every 3 epochs
      {19, 10, 100, 3, 8, false},   // 19 is not: the run goes on to 21
      {21, 10, 100, 3, 8, true},    //
      {100, 10, 100, 1, 8, false},  // the last epoch ends the run anyway, not early
      {18, 18, 100, 1, 8, false},   // the best is this epoch
  };
  for (const Case& c : cases) {
    RunOptions opt = options(c.epochs, c.eval_every, c.patience);
    EXPECT_EQ(stops_early_after(at(c.epoch, c.best_epoch), opt), c.stops)
        << "epoch " << c.epoch << ", best " << c.best_epoch << ", epochs " << c.epochs
        << ", eval_every " << c.eval_every << ", patience " << c.patience;
    opt.start = at(c.epoch, c.best_epoch);
    EXPECT_EQ(training_finished(opt), c.stops || c.epoch >= c.epochs) << "epoch " << c.epoch;
  }
  RunOptions fresh = options(100, 1, 8);
  EXPECT_FALSE(training_finished(fresh)) << "a fresh run";
  fresh.start = at(120, 110);
  EXPECT_TRUE(training_finished(fresh)) << "a checkpoint past training.epochs";
}

}  // namespace
}  // namespace adaqp
