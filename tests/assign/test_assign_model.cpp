// The assignment problem's model: row bytes, bounds, evaluation, validation, time models, the
// link cost fit, probe sizes, variance weights, and the clock offset of timestamps across ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "adaqp/assign/link_fit.h"
#include "adaqp/assign/problem.h"
#include "adaqp/assign/variance_weight.h"
#include "adaqp/comm/clock_offset.h"
#include "adaqp/common/error.h"
#include "adaqp/quant/widths.h"

namespace adaqp::assign {
namespace {

// Two ranks, d = 10: rows of 3 / 5 / 10 bytes + 8 meta at 2 / 4 / 8 bits.
AssignProblem two_rank_problem() {
  AssignProblem p;
  p.row_width = 10;
  p.time = per_link_time_model(2, {{0, 0}, {1.0, 0.5}, {2.0, 0.25}, {0, 0}});
  p.messages = {{0, 1, 9.0}, {0, 1, 0.0}, {1, 0, 225.0}};
  return p;
}

// Full precision as a width: 4 d bytes, no metadata, no variance; it does not move the objective's
// bounds (those of the codec widths), and a set needs a codec width.
TEST(AssignModel, FullPrecisionIsAWidthOutsideTheBounds) {
  AssignProblem p;
  p.row_width = 10;
  p.time = per_sender_time_model({{0, 1e-3}, {0, 1e-3}});
  p.messages = {{0, 1, 2.0}, {1, 0, 3.0}};
  EXPECT_EQ(row_bytes(p, quant::kFullPrecisionBits), 40);
  EXPECT_EQ(variance_factor(quant::kFullPrecisionBits), 0.0);
  p.bits = {2, 8};
  const ObjectiveBounds codec = objective_bounds(p);
  p.bits = {2, 8, quant::kFullPrecisionBits};
  validate(p);
  const ObjectiveBounds with_full = objective_bounds(p);
  EXPECT_EQ(with_full.vmin, codec.vmin);
  EXPECT_EQ(with_full.tmax, codec.tmax);
  const Evaluation e = evaluate(p, {32, 32}, 0.5);
  EXPECT_EQ(e.variance, 0.0);
  EXPECT_DOUBLE_EQ(e.time, 40 * 1e-3);
  p.bits = {quant::kFullPrecisionBits};
  EXPECT_THROW(validate(p), ConfigError);
  p.bits = {4, 16};
  EXPECT_THROW(validate(p), ConfigError);
}

TEST(AssignModel, RowBytesAndVarianceFactor) {
  const AssignProblem p = two_rank_problem();
  EXPECT_EQ(row_bytes(p, 2), 3 + 8);
  EXPECT_EQ(row_bytes(p, 4), 5 + 8);
  EXPECT_EQ(row_bytes(p, 8), 10 + 8);
  EXPECT_DOUBLE_EQ(variance_factor(2), 1.0 / 9);
  EXPECT_DOUBLE_EQ(variance_factor(4), 1.0 / 225);
  EXPECT_DOUBLE_EQ(variance_factor(8), 1.0 / 65025);
}

TEST(AssignModel, BoundsAndEvaluationByHand) {
  const AssignProblem p = two_rank_problem();
  const ObjectiveBounds b = objective_bounds(p);
  EXPECT_DOUBLE_EQ(b.vmax, 234.0 / 9);
  EXPECT_DOUBLE_EQ(b.vmin, 234.0 / 65025);
  // Link 0->1 carries 2 rows, 1->0 one row: max(1 + 0.5 * 22, 2 + 0.25 * 11) at 2 bits.
  EXPECT_DOUBLE_EQ(b.tmin, 12.0);
  EXPECT_DOUBLE_EQ(b.tmax, 19.0);  // max(1 + 0.5 * 36, 2 + 0.25 * 18)
  const Evaluation e = evaluate(p, {8, 2, 4}, 0.25);
  EXPECT_DOUBLE_EQ(e.variance, 9.0 / 65025 + 1.0);
  EXPECT_DOUBLE_EQ(e.time, 15.5);  // 1 + 0.5 * (18 + 11) vs 2 + 0.25 * 13
  EXPECT_DOUBLE_EQ(e.objective,
                   0.25 * (e.variance - b.vmin) / (b.vmax - b.vmin) + 0.75 * (15.5 - 12.0) / 7.0);
}

// Time hidden behind local work is free: the bounds and the objective count max(T, hidden_s).
TEST(AssignModel, HiddenTimeIsNotCounted) {
  AssignProblem p = two_rank_problem();
  p.hidden_s = 15.0;  // between Tmin = 12 and Tmax = 19
  const ObjectiveBounds b = objective_bounds(p);
  EXPECT_DOUBLE_EQ(b.tmin, 15.0);
  EXPECT_DOUBLE_EQ(b.tmax, 19.0);
  const Evaluation e = evaluate(p, {8, 2, 4}, 0.25);
  EXPECT_DOUBLE_EQ(e.time, 15.5);  // the modelled exchange time itself
  EXPECT_DOUBLE_EQ(e.objective,
                   0.25 * (e.variance - b.vmin) / (b.vmax - b.vmin) + 0.75 * (15.5 - 15.0) / 4.0);
  const Evaluation low = evaluate(p, {2, 2, 2}, 0.25);  // 12 <= hidden: no time term
  EXPECT_DOUBLE_EQ(low.objective, 0.25);
  p.hidden_s = 25.0;  // everything hidden: only the variance counts
  EXPECT_DOUBLE_EQ(objective_bounds(p).tmin, 25.0);
  EXPECT_DOUBLE_EQ(objective_bounds(p).tmax, 25.0);
  EXPECT_DOUBLE_EQ(evaluate(p, {8, 8, 8}, 0.25).objective, 0.0);
  p.hidden_s = -1;
  EXPECT_THROW(validate(p), ConfigError);
}

TEST(AssignModel, EqualBoundsGiveZeroTerms) {
  ObjectiveBounds b;
  b.vmin = b.vmax = 3;
  b.tmin = b.tmax = 2;
  EXPECT_EQ(normalized_objective(b, 0.5, 3, 2), 0.0);
  const ObjectiveBounds c = combine({1, 2, 3, 4}, {10, 20, 1, 5});
  EXPECT_EQ(c.vmin, 11);
  EXPECT_EQ(c.vmax, 22);
  EXPECT_EQ(c.tmin, 3);
  EXPECT_EQ(c.tmax, 5);
}

TEST(AssignModel, TimeModels) {
  const TimeModel link = per_link_time_model(3, std::vector<LinkCost>(9, {1, 1}));
  EXPECT_EQ(link.channels.size(), 6u);
  EXPECT_EQ(link.channel(0, 0), -1);
  EXPECT_NE(link.channel(0, 1), link.channel(0, 2));
  EXPECT_NE(link.channel(0, 1), link.channel(1, 0));
  EXPECT_EQ(link.channel_time(link.channel(0, 1), 0), 0.0);
  EXPECT_EQ(link.channel_time(link.channel(0, 1), 4), 5.0);
  const TimeModel sender = per_sender_time_model({{1, 1}, {2, 2}, {3, 3}});
  EXPECT_EQ(sender.channels.size(), 3u);
  EXPECT_EQ(sender.channel(2, 0), 2);
  EXPECT_EQ(sender.channel(2, 1), 2);
  EXPECT_EQ(sender.channel(1, 1), -1);
  EXPECT_THROW(per_link_time_model(3, std::vector<LinkCost>(8)), ConfigError);
  // Two hosts (ranks 0, 1 and 2): each sender's peers on its host share one channel, those on
  // other hosts another.
  const std::vector<int> host_of = {0, 0, 1};
  std::vector<LinkCost> costs(6);
  for (size_t c = 0; c < costs.size(); ++c) costs[c] = {0, 1.0 + c};
  const TimeModel classes = per_sender_class_time_model(host_of, costs);
  EXPECT_EQ(classes.channels.size(), 6u);
  EXPECT_EQ(classes.channel(0, 1), 2 * 0 + kSameHost);
  EXPECT_EQ(classes.channel(0, 2), 2 * 0 + kOtherHost);
  EXPECT_EQ(classes.channel(1, 0), 2 * 1 + kSameHost);
  EXPECT_EQ(classes.channel(2, 0), 2 * 2 + kOtherHost);
  EXPECT_EQ(classes.channel(2, 1), 2 * 2 + kOtherHost);
  EXPECT_EQ(classes.channel(1, 1), -1);
  EXPECT_EQ(classes.channel_time(classes.channel(2, 1), 2), 2 * 6.0);  // costs[5]
  EXPECT_THROW(per_sender_class_time_model(host_of, std::vector<LinkCost>(5)), ConfigError);
}

TEST(AssignModel, ValidationNamesTheProblem) {
  const AssignProblem good = two_rank_problem();
  EXPECT_NO_THROW(validate(good));
  AssignProblem p = good;
  p.bits = {2, 3};
  EXPECT_THROW(validate(p), ConfigError);
  p.bits = {4, 4};
  EXPECT_THROW(validate(p), ConfigError);
  p.bits = {};
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.row_width = 0;
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.time.channels[0].beta = 0;
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.messages[2].receiver = 1;
  try {
    validate(p);
    FAIL() << "self-message accepted";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("message 2"), std::string::npos) << e.what();
  }
  p = good;
  p.messages[1].weight = -1;
  EXPECT_THROW(validate(p), InvariantError);
}

// Deterministic uniform noise in [-1, 1).
double noise(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0;
}

TEST(AssignModel, FitIsExactOnNoiselessTimings) {
  const double alpha = 25e-6, beta = 0.8e-9;
  std::vector<TimingSample> samples;
  for (int64_t bytes : probe_sizes(64, 64 << 20, 50))
    samples.push_back({bytes, alpha + beta * bytes});
  const LinkFit fit = fit_link(samples, "link 0->1");
  EXPECT_NEAR(fit.alpha, alpha, 1e-12 * alpha * 1e3);
  EXPECT_NEAR(fit.beta, beta, 1e-12 * beta);
  EXPECT_NEAR(fit.r2, 1.0, 1e-12);
  EXPECT_EQ(fit.samples, 50);
}

TEST(AssignModel, FitRecoversNoisyLink) {
  const double alpha = 40e-6, beta = 1.25e-9;
  std::mt19937_64 gen(42);
  std::vector<TimingSample> samples;
  for (int rep = 0; rep < 4; ++rep) {
    for (int64_t bytes : probe_sizes(256, 1 << 20, 50)) {
      const double t = alpha + beta * bytes;  // 2% relative jitter plus 2 us absolute
      samples.push_back({bytes, t * (1 + 0.02 * noise(gen)) + 2e-6 * noise(gen)});
    }
  }
  const LinkFit fit = fit_link(samples, "link 1->0");
  EXPECT_NEAR(fit.alpha, alpha, 0.05 * alpha);
  EXPECT_NEAR(fit.beta, beta, 0.05 * beta);
  EXPECT_GT(fit.r2, 0.95);
  const std::vector<LinkCost> cost = plan_costs({fit}, 1);
  EXPECT_EQ(cost[0].alpha, fit.alpha);
  EXPECT_EQ(cost[0].beta, fit.beta);
}

TEST(AssignModel, FitIgnoresDelayedRepeatsAndWeighsSizesByRelativeError) {
  // 5 repeats of 24 sizes over three decades; two repeats of every size are delayed 1.5x to 6x
  // (a descheduled process), the rest jitter by 3%. Least squares on the raw samples is pulled far
  // off; the medians' line recovers the link.
  const double alpha = 2e-3, beta = 80e-9;
  std::mt19937_64 gen(7);
  std::vector<TimingSample> samples;
  for (int rep = 0; rep < 5; ++rep) {
    for (int64_t bytes : probe_sizes(4096, 8 << 20, 24)) {
      const double t = alpha + beta * bytes;
      const double delayed = 1.5 + 2.25 * (1 + noise(gen));
      samples.push_back({bytes, rep < 2 ? t * delayed : t * (1 + 0.03 * noise(gen))});
    }
  }
  const LinkFit fit = fit_link(samples, "sender 0");
  EXPECT_NEAR(fit.alpha, alpha, 0.05 * alpha);
  EXPECT_NEAR(fit.beta, beta, 0.05 * beta);
  EXPECT_EQ(fit.samples, 120);
  EXPECT_LT(fit.r2, 0.9);  // the delayed repeats stay in the reported spread
}

TEST(AssignModel, ClockOffsetTakesTheShortestRoundTrip) {
  // The reference clock runs 100 s ahead; the second ping-pong was quickest (2 ms round trip).
  const std::vector<ClockSample> samples = {
      {10.000, 110.004, 10.010}, {20.000, 120.001, 20.002}, {30.000, 130.000, 30.008}};
  EXPECT_DOUBLE_EQ(clock_offset(samples), 120.001 - 20.001);
  EXPECT_DOUBLE_EQ(clock_offset({{5.0, 4.0, 7.0}}), -2.0);
  EXPECT_THROW(clock_offset({}), InvariantError);
  EXPECT_THROW(clock_offset({{2.0, 1.0, 1.0}}), InvariantError);
}

TEST(AssignModel, FitRejectsDegenerateSamples) {
  const std::vector<TimingSample> one_size = {{1024, 1e-5}, {1024, 2e-5}, {1024, 1.5e-5}};
  try {
    fit_link(one_size, "link 2->3");
    FAIL() << "one distinct size accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("link 2->3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("2 distinct"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fit_link({}, "link 0->1"), InputError);
  EXPECT_THROW(fit_link({{-1, 1e-5}, {10, 2e-5}}, "link 0->1"), InputError);
  // A falling line plans with the largest slope of its class (channel c is of class c % 2), or
  // kFallbackBeta where its class has none; a negative intercept is clamped.
  const LinkFit falling = fit_link({{10, 2e-5}, {20, 1e-5}}, "link 0->1");
  const LinkFit rising = fit_link({{10, 0.5e-5}, {20, 2e-5}}, "link 1->0");
  const LinkFit steeper = fit_link({{10, 1e-5}, {20, 4e-5}}, "link 2->0");
  EXPECT_LT(falling.beta, 0);
  EXPECT_LT(rising.alpha, 0);
  const std::vector<LinkCost> costs = plan_costs({falling, rising, steeper, falling}, 2);
  EXPECT_DOUBLE_EQ(costs[0].beta, steeper.beta);  // class 0: {falling, steeper}
  EXPECT_EQ(costs[1].alpha, 0.0);
  EXPECT_DOUBLE_EQ(costs[1].beta, 1.5e-6);
  EXPECT_DOUBLE_EQ(costs[2].beta, steeper.beta);
  EXPECT_DOUBLE_EQ(costs[3].beta, rising.beta);  // class 1: {rising, falling}
  EXPECT_EQ(plan_costs({falling}, 1)[0].beta, kFallbackBeta);
}

TEST(AssignModel, ProbeSizesAreGeometric) {
  EXPECT_EQ(probe_sizes(1, 1000, 4), (std::vector<int64_t>{1, 10, 100, 1000}));
  EXPECT_EQ(probe_sizes(1, 3, 10), (std::vector<int64_t>{1, 2, 3}));
  const std::vector<int64_t> many = probe_sizes(64, 1 << 26, 200);
  EXPECT_EQ(many.size(), 200u);
  EXPECT_TRUE(std::is_sorted(many.begin(), many.end()));
  EXPECT_EQ(many.front(), 64);
  EXPECT_EQ(many.back(), 1 << 26);
  EXPECT_THROW(probe_sizes(0, 10, 5), ConfigError);
  EXPECT_THROW(probe_sizes(10, 10, 5), ConfigError);
  EXPECT_THROW(probe_sizes(1, 10, 1), ConfigError);
}

TEST(AssignModel, VarianceWeights) {
  EXPECT_DOUBLE_EQ(backward_variance_weight(12, 0.5), 12 * 0.25 / 6);
  EXPECT_DOUBLE_EQ(forward_variance_weight(0.3, 12, 0.5), 0.3 * 12 * 0.25 / 6);
  EXPECT_EQ(forward_variance_weight(0.0, 12, 0.5), 0.0);
  EXPECT_THROW(backward_variance_weight(0, 1.0), InvariantError);
}

// What validate() checks beyond ValidationNamesTheProblem: a non-finite hidden time, a negative
// latency, a pair mapped to a wrong channel or a missing pair entry, a rank out of range, a
// non-finite weight.
TEST(AssignModel, ValidationRejectsEveryBadField) {
  const AssignProblem good = two_rank_problem();
  AssignProblem p = good;
  for (double hidden : {std::nan(""), HUGE_VAL}) {
    p = good;
    p.hidden_s = hidden;
    EXPECT_THROW(validate(p), ConfigError) << hidden;
  }
  p = good;
  p.time.channels[1].alpha = -1e-6;
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.time.channel_of_pair[0] = 0;  // 0->0 carries nothing: it maps to no channel
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.time.channel_of_pair[1] = 4;  // 0->1 on a channel that does not exist
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.time.channel_of_pair.pop_back();
  EXPECT_THROW(validate(p), ConfigError);
  p = good;
  p.messages[0].receiver = 2;  // world size 2
  EXPECT_THROW(validate(p), InvariantError);
  p = good;
  p.messages[0].sender = -1;
  EXPECT_THROW(validate(p), InvariantError);
  for (double weight : {std::nan(""), HUGE_VAL}) {
    p = good;
    p.messages[1].weight = weight;
    EXPECT_THROW(validate(p), InvariantError) << weight;
  }
}

// Links of two classes: channel 2 s + class, so the classes alternate; the other models have no
// classes. A model needs at least one rank.
TEST(AssignModel, TimeModelClassesAndEmptyWorlds) {
  const TimeModel classes =
      per_sender_class_time_model({0, 0, 1}, std::vector<LinkCost>(6, LinkCost{0, 1}));
  EXPECT_EQ(classes.class_of_channel, (std::vector<int8_t>{kSameHost, kOtherHost, kSameHost,
                                                           kOtherHost, kSameHost, kOtherHost}));
  EXPECT_TRUE(per_sender_time_model({{0, 1}, {0, 1}}).class_of_channel.empty());
  EXPECT_TRUE(
      per_link_time_model(2, std::vector<LinkCost>(4, LinkCost{0, 1})).class_of_channel.empty());
  EXPECT_THROW(per_link_time_model(0, {}), ConfigError);
  EXPECT_THROW(per_sender_class_time_model({}, {}), ConfigError);
}

// The median of each size: the middle one of an odd count of repeats, the mean of the middle two
// of an even count. Two sizes fix the line through their medians.
TEST(AssignModel, FitGoesThroughTheMediansOfEachSize) {
  // Even: medians 2 (of 3, 1) and 3 (of 4, 2): beta = 0.01 s per byte, alpha = 1 s.
  const LinkFit even = fit_link({{100, 3.0}, {100, 1.0}, {200, 4.0}, {200, 2.0}}, "even");
  EXPECT_NEAR(even.beta, 0.01, 1e-15);
  EXPECT_NEAR(even.alpha, 1.0, 1e-12);
  // Odd: medians 2 (of 9, 1, 2) and 4 (of 4, 3, 30): beta = 0.02, alpha = 0.
  const LinkFit odd =
      fit_link({{100, 9.0}, {100, 1.0}, {100, 2.0}, {200, 4.0}, {200, 3.0}, {200, 30.0}}, "odd");
  EXPECT_NEAR(odd.beta, 0.02, 1e-15);
  EXPECT_NEAR(odd.alpha, 0.0, 1e-12);
}

// Three sizes off one line: weighted least squares with weights 1 / t^2 (relative errors), worked
// by hand in exact fractions: beta = 27 / 36.5e6 s per byte, alpha = 3 / 14600 s.
TEST(AssignModel, FitWeighsByRelativeErrorExactly) {
  const LinkFit fit = fit_link({{1000, 1.0e-3}, {2000, 1.5e-3}, {4000, 3.5e-3}}, "sender 0");
  EXPECT_NEAR(fit.beta, 27.0 / 36.5e6, 1e-9 * 27.0 / 36.5e6);
  EXPECT_NEAR(fit.alpha, 3.0 / 14600, 1e-9 * 3.0 / 14600);
}

// A non-finite time is no sample; a flat line (beta exactly 0, here in exact arithmetic) fits every
// sample (R^2 = 1) but is no usable cost.
TEST(AssignModel, FitRejectsNonFiniteTimesAndFlatLines) {
  for (double bad : {std::nan(""), HUGE_VAL}) {
    EXPECT_THROW(fit_link({{10, 1e-5}, {20, bad}}, "l"), InputError) << bad;
  }
  const LinkFit flat = fit_link({{10, 0.5}, {20, 0.5}}, "l");
  EXPECT_EQ(flat.beta, 0.0);
  EXPECT_EQ(flat.alpha, 0.5);
  EXPECT_EQ(flat.r2, 1.0);
  EXPECT_EQ(plan_costs({flat}, 1)[0].beta, kFallbackBeta);
}

TEST(AssignModel, VarianceWeightsRejectNegativeInputs) {
  EXPECT_THROW(forward_variance_weight(-0.1, 12, 0.5), InvariantError);
  EXPECT_THROW(backward_variance_weight(12, -0.5), InvariantError);
  EXPECT_THROW(forward_variance_weight(0.1, 12, -0.5), InvariantError);
}

// The bounds count every message, whichever order the links come in: here the run of the link
// that sets both bounds comes last.
TEST(AssignModel, BoundsCountTheLastRunOfMessages) {
  AssignProblem p = two_rank_problem();
  std::reverse(p.messages.begin(), p.messages.end());  // 1->0, then the two of 0->1
  const ObjectiveBounds b = objective_bounds(p);
  EXPECT_DOUBLE_EQ(b.tmin, 12.0);
  EXPECT_DOUBLE_EQ(b.tmax, 19.0);
  EXPECT_DOUBLE_EQ(b.vmax, 234.0 / 9);
}

}  // namespace
}  // namespace adaqp::assign
