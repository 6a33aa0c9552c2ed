// The fast budget solver against the exact MILP and brute force, and the solver contracts: the bit
// set, the lambda endpoints, determinism, groups, budgets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "adaqp/assign/budget_solver.h"
#include "adaqp/assign/solve.h"
#include "adaqp/common/error.h"
#include "adaqp/quant/widths.h"
#include "test_util.h"

namespace adaqp::assign {
namespace {

// Platform-independent draws (std distributions are implementation-defined).
class Draw {
 public:
  explicit Draw(uint64_t seed) : gen_(seed) {}
  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  int below(int n) { return static_cast<int>(gen_() % static_cast<uint64_t>(n)); }

 private:
  std::mt19937_64 gen_;
};

std::vector<LinkCost> random_link_costs(Draw& draw, int world) {
  std::vector<LinkCost> costs(static_cast<size_t>(world) * world);
  for (LinkCost& c : costs) c = {draw.uniform() * 1e-4, (0.2 + draw.uniform()) * 1e-8};
  return costs;
}

// Skewed weights (a few heavy messages), some zero.
std::vector<Message> random_messages(Draw& draw, int n, int world) {
  std::vector<Message> messages(n);
  for (Message& m : messages) {
    m.sender = draw.below(world);
    m.receiver = (m.sender + 1 + draw.below(world - 1)) % world;
    const double u = draw.uniform();
    m.weight = draw.below(20) == 0 ? 0.0 : 10 * u * u * u;
  }
  return messages;
}

AssignProblem random_problem(uint64_t seed, int n, int world, std::vector<int> bits) {
  Draw draw(seed);
  AssignProblem p;
  p.row_width = 16 + draw.below(240);
  p.bits = std::move(bits);
  p.time = per_link_time_model(world, random_link_costs(draw, world));
  p.messages = random_messages(draw, n, world);
  return p;
}

AssignOptions options_for(Solver solver, double lambda, int group_size = 1) {
  AssignOptions o;
  o.solver = solver;
  o.lambda = lambda;
  o.group_size = group_size;
  o.exact_time_limit_s = 30;
  return o;
}

bool in_set(const AssignProblem& p, const std::vector<uint8_t>& bits) {
  return std::all_of(bits.begin(), bits.end(), [&](uint8_t b) {
    return std::find(p.bits.begin(), p.bits.end(), b) != p.bits.end();
  });
}

// Fast within 0.5% of the proven optimum; both in the bit set. The optimum is proven up to GLPK's
// objective tolerance (1e-7 relative): fast may beat it by no more.
void expect_fast_close_to_exact(const AssignProblem& p, const Assignment& exact,
                                const Assignment& fast) {
  ASSERT_TRUE(exact.proven_optimal);
  EXPECT_TRUE(in_set(p, exact.bits));
  EXPECT_TRUE(in_set(p, fast.bits));
  EXPECT_LE(exact.eval.objective, fast.eval.objective + 1e-7 * (1 + std::abs(fast.eval.objective)))
      << "exact " << exact.eval.objective << " fast " << fast.eval.objective;
  EXPECT_LE(fast.eval.objective, exact.eval.objective * 1.005 + 1e-12)
      << "fast " << fast.eval.objective << " exact " << exact.eval.objective;
}

// The same, solving p with both solvers.
void expect_close_to_exact(const AssignProblem& p, double lambda, int group_size) {
  expect_fast_close_to_exact(p,
                             solve_assignment(p, options_for(Solver::kExact, lambda, group_size)),
                             solve_assignment(p, options_for(Solver::kFast, lambda, group_size)));
}

TEST(AssignSolver, FastWithinHalfPercentOfExactMilp) {
  const std::vector<std::vector<int>> bit_sets = {{2, 4, 8}, {2, 8}, {4, 8}};
  const double lambdas[] = {0.25, 0.5, 0.75};
  uint64_t seed = 1000;
  for (int world = 2; world <= 4; ++world) {
    for (const auto& bits : bit_sets) {
      for (double lambda : lambdas) {
        ++seed;
        const int n = 20 + static_cast<int>(seed * 37 % 281);  // 20 .. 300
        SCOPED_TRACE("seed " + std::to_string(seed) + " n " + std::to_string(n) + " world " +
                     std::to_string(world) + " lambda " + std::to_string(lambda));
        expect_close_to_exact(random_problem(seed, n, world, bits), lambda, 1);
      }
    }
  }
}

TEST(AssignSolver, FastWithinHalfPercentOfExactWithGroups) {
  for (uint64_t seed = 2000; seed < 2006; ++seed) {
    const int group_size = 2 + static_cast<int>(seed % 3);
    SCOPED_TRACE("seed " + std::to_string(seed) + " group " + std::to_string(group_size));
    expect_close_to_exact(random_problem(seed, 240, 3, {2, 4, 8}), 0.5, group_size);
  }
}

TEST(AssignSolver, FastWithinHalfPercentOfExactPerSenderModel) {
  for (uint64_t seed = 3000; seed < 3006; ++seed) {
    Draw draw(seed);
    AssignProblem p;
    p.row_width = 64;
    const int world = 2 + static_cast<int>(seed % 3);
    std::vector<LinkCost> costs(world);
    for (LinkCost& c : costs) c = {draw.uniform() * 1e-4, (0.2 + draw.uniform()) * 1e-8};
    p.time = per_sender_time_model(costs);
    p.messages = random_messages(draw, 200, world);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_close_to_exact(p, 0.5, 1);
  }
}

// Links of two speeds: each sender's messages to its own host cross a channel 1000 times faster
// than those to the other host. With full precision allowed, both solvers send every message of
// weight on a fast channel at full precision (it fits in any budget the slow channels set) and
// still quantize the slow ones; the fast solver stays within 0.5% of the MILP.
TEST(AssignSolver, FullPrecisionWhereTheLinkIsFast) {
  for (uint64_t seed = 4000; seed < 4004; ++seed) {
    Draw draw(seed);
    const int world = 4;
    const std::vector<int> host_of = {0, 0, 1, 1};
    std::vector<LinkCost> costs(kLinkClasses * world);
    for (int s = 0; s < world; ++s) {
      const double beta = (0.5 + draw.uniform()) * 1e-8;
      costs[kLinkClasses * s + kSameHost] = {0, beta / 1000};
      costs[kLinkClasses * s + kOtherHost] = {draw.uniform() * 1e-5, beta};
    }
    AssignProblem p;
    p.row_width = 64;
    p.bits = {2, 4, 8, quant::kFullPrecisionBits};
    p.time = per_sender_class_time_model(host_of, costs);
    p.messages = random_messages(draw, 240, world);
    SCOPED_TRACE("seed " + std::to_string(seed));
    // Each solved once (the MILP takes seconds here), then checked both ways.
    const Assignment exact = solve_assignment(p, options_for(Solver::kExact, 0.5));
    const Assignment fast = solve_assignment(p, options_for(Solver::kFast, 0.5));
    expect_fast_close_to_exact(p, exact, fast);
    for (Solver solver : {Solver::kFast, Solver::kExact}) {
      const Assignment& a = solver == Solver::kFast ? fast : exact;
      int64_t slow_full = 0, slow = 0;
      for (size_t j = 0; j < p.messages.size(); ++j) {
        const Message& m = p.messages[j];
        if (link_class(host_of, m.sender, m.receiver) == kOtherHost) {
          ++slow;
          slow_full += a.bits[j] == quant::kFullPrecisionBits ? 1 : 0;
        } else if (m.weight > 0) {
          EXPECT_EQ(a.bits[j], quant::kFullPrecisionBits) << to_string(solver) << " message " << j;
        }
      }
      EXPECT_LT(slow_full, slow / 10) << to_string(solver) << ": the slow links went unquantized";
    }
  }
}

// Links of two speeds with the exchange hidden up to and beyond the all-8-bit time: full precision
// is taken only where it fits in the hidden window (the fast same-host links), never by the whole
// exchange (found by a review, 2026-12-07: once the window held all 8 bits the time bounds
// coincided, time stopped counting, and every message went to full precision, 2.9 times the
// window; at 0.999 of the way GLPK's feasibility pump, since left off, never returned).
TEST(AssignSolver, FullPrecisionOnlyWhereItFitsTheHiddenWindow) {
  const int world = 4;
  const std::vector<int> host_of = {0, 0, 1, 1};
  std::vector<LinkCost> costs(kLinkClasses * world);
  for (int s = 0; s < world; ++s) {
    costs[kLinkClasses * s + kSameHost] = {0, 1e-10};
    costs[kLinkClasses * s + kOtherHost] = {1e-5, 1e-8};
  }
  AssignProblem p;
  p.row_width = 64;
  p.bits = {2, 4, 8, quant::kFullPrecisionBits};
  p.time = per_sender_class_time_model(host_of, costs);
  for (int s = 0; s < world; ++s) {
    for (int r = 0; r < world; ++r) {
      for (int k = 0; r != s && k < 20; ++k) p.messages.push_back({s, r, 1.0 + k});
    }
  }
  const ObjectiveBounds open = objective_bounds(p);
  for (const double fraction : {0.999, 1.0, 1.5}) {
    p.hidden_s = open.tmin + fraction * (open.tmax - open.tmin);
    SCOPED_TRACE("hidden at " + std::to_string(fraction) + " of the codec widths' time range");
    // With the window as the budget the MILP is a knapsack per channel, which GLPK does not prove
    // optimal in seconds: its best solution must still fit.
    AssignOptions exact_options = options_for(Solver::kExact, 0.5);
    if (fraction >= 1) exact_options.exact_time_limit_s = 2;
    const Assignment exact = solve_assignment(p, exact_options);
    const Assignment fast = solve_assignment(p, options_for(Solver::kFast, 0.5));
    if (fraction < 1) expect_fast_close_to_exact(p, exact, fast);
    for (const Assignment* a : {&exact, &fast}) {
      if (fraction >= 1) {
        EXPECT_LE(a->eval.time, p.hidden_s * (1 + 1e-9));
      }
      int64_t slow_full = 0;
      for (size_t j = 0; j < p.messages.size(); ++j) {
        const Message& m = p.messages[j];
        if (link_class(host_of, m.sender, m.receiver) == kSameHost) {
          EXPECT_EQ(a->bits[j], quant::kFullPrecisionBits) << "message " << j;
        } else {
          slow_full += a->bits[j] == quant::kFullPrecisionBits ? 1 : 0;
        }
      }
      // Short of the all-8-bit time the window holds no slow message at full precision; half as
      // long again it holds some, not all 160.
      if (fraction < 1) {
        EXPECT_EQ(slow_full, 0);
      } else if (fraction > 1) {
        EXPECT_LT(slow_full, 80);
      }
    }
  }
}

// Rows of 1 or 2 values are fewer bytes at full precision (4 d) than at any codec width (8 bytes of
// metadata and the codes): full precision is then every weighted message's choice, whatever the
// budget (a hull that stepped from full precision to a codec width raised the variance). (The MILP
// is no referee here: its variance coefficients, about 1e-7 a message, fall below GLPK's
// tolerances.)
TEST(AssignSolver, FullPrecisionWhereItIsTheSmallestRow) {
  for (const int64_t d : {1, 2}) {
    Draw draw(static_cast<uint64_t>(5000 + d));
    AssignProblem p;
    p.row_width = d;
    p.bits = {2, 4, 8, quant::kFullPrecisionBits};
    p.time = per_sender_time_model({{1e-5, 1e-8}, {1e-5, 2e-8}, {1e-5, 3e-8}});
    p.messages = random_messages(draw, 300, 3);
    const Assignment fast = solve_assignment(p, options_for(Solver::kFast, 0.5));
    for (size_t j = 0; j < p.messages.size(); ++j) {
      if (p.messages[j].weight == 0) continue;
      ASSERT_EQ(fast.bits[j], quant::kFullPrecisionBits) << "d " << d << ", message " << j;
    }
    EXPECT_EQ(fast.eval.variance, 0.0) << "d " << d;
  }
}

// With part of the exchange hidden behind local work (AssignProblem::hidden_s) both solvers count
// only the exposed time; all hidden gives every message of non-zero weight the largest width.
TEST(AssignSolver, FastWithinHalfPercentOfExactWithHiddenTime) {
  for (uint64_t seed = 3100; seed < 3106; ++seed) {
    AssignProblem p = random_problem(seed, 200, 2 + static_cast<int>(seed % 3), {2, 4, 8});
    p.hidden_s = 0;
    const ObjectiveBounds open = objective_bounds(p);
    p.hidden_s = open.tmin + (open.tmax - open.tmin) * (0.2 + 0.15 * static_cast<double>(seed % 4));
    SCOPED_TRACE("seed " + std::to_string(seed) + " hidden " + std::to_string(p.hidden_s));
    expect_close_to_exact(p, 0.5, 1);
    // The hidden window is filled: the fast solver's exchange takes at least most of it.
    const Assignment fast = solve_assignment(p, options_for(Solver::kFast, 0.5));
    EXPECT_GE(fast.eval.time, p.hidden_s * 0.9);
    p.hidden_s = open.tmax * 1.5;
    for (Solver solver : {Solver::kFast, Solver::kExact}) {
      const Assignment a = solve_assignment(p, options_for(solver, 0.5));
      for (size_t j = 0; j < a.bits.size(); ++j) {
        if (p.messages[j].weight > 0) {
          EXPECT_EQ(a.bits[j], 8) << "message " << j;
        }
      }
    }
  }
}

// The referee itself: on tiny instances the MILP finds the brute-force optimum.
TEST(AssignSolver, ExactMatchesBruteForce) {
  for (uint64_t seed = 4000; seed < 4008; ++seed) {
    const AssignProblem p = random_problem(seed, 7, 2 + static_cast<int>(seed % 3), {2, 4, 8});
    const double lambda = 0.5;
    std::vector<uint8_t> bits(p.messages.size(), 2);
    double best = 1e300;
    std::function<void(size_t)> enumerate = [&](size_t j) {
      if (j == bits.size()) {
        best = std::min(best, evaluate(p, bits, lambda).objective);
        return;
      }
      for (int b : p.bits) {
        bits[j] = static_cast<uint8_t>(b);
        enumerate(j + 1);
      }
    };
    enumerate(0);
    const Assignment exact = solve_assignment(p, options_for(Solver::kExact, lambda));
    EXPECT_NEAR(exact.eval.objective, best, 1e-9) << "seed " << seed;
    EXPECT_LE(solve_assignment(p, options_for(Solver::kFast, lambda)).eval.objective,
              best * 1.005 + 1e-12)
        << "seed " << seed;
  }
}

TEST(AssignSolver, LambdaEndpointsGiveUniformExtremes) {
  const AssignProblem p = random_problem(5, 150, 3, {2, 4, 8});
  for (Solver solver : {Solver::kFast, Solver::kExact}) {
    const Assignment all_max = solve_assignment(p, options_for(solver, 1.0));
    const Assignment all_min = solve_assignment(p, options_for(solver, 0.0));
    EXPECT_TRUE(
        std::all_of(all_max.bits.begin(), all_max.bits.end(), [](uint8_t b) { return b == 8; }));
    EXPECT_TRUE(
        std::all_of(all_min.bits.begin(), all_min.bits.end(), [](uint8_t b) { return b == 2; }));
    EXPECT_NEAR(all_max.eval.objective, 0.0, 1e-12);
    EXPECT_NEAR(all_min.eval.objective, 0.0, 1e-12);
  }
}

TEST(AssignSolver, DeterministicAcrossRuns) {
  const AssignProblem p = random_problem(6, 20000, 4, {2, 4, 8});
  const Assignment a = solve_assignment(p, options_for(Solver::kFast, 0.5));
  const Assignment b = solve_assignment(p, options_for(Solver::kFast, 0.5));
  EXPECT_EQ(a.bits, b.bits);
  EXPECT_EQ(a.eval.objective, b.eval.objective);
  // A non-trivial mix, not an endpoint.
  EXPECT_GT(std::count(a.bits.begin(), a.bits.end(), 2), 0);
  EXPECT_GT(std::count(a.bits.begin(), a.bits.end(), 8), 0);
}

TEST(AssignSolver, GroupsShareOneBitWidth) {
  const AssignProblem p = random_problem(7, 500, 4, {2, 4, 8});
  const int group_size = 7;
  for (Solver solver : {Solver::kFast, Solver::kExact}) {
    const Assignment a = solve_assignment(p, options_for(solver, 0.5, group_size));
    std::vector<std::vector<uint8_t>> per_link(16);
    for (size_t j = 0; j < p.messages.size(); ++j) {
      per_link[p.messages[j].sender * 4 + p.messages[j].receiver].push_back(a.bits[j]);
    }
    int mixed_links = 0;
    for (const auto& link : per_link) {
      for (size_t k = 0; k < link.size(); ++k) {
        EXPECT_EQ(link[k], link[k - k % group_size]) << "message " << k << " of its link";
      }
      if (std::adjacent_find(link.begin(), link.end(), std::not_equal_to<>()) != link.end()) {
        ++mixed_links;
      }
    }
    EXPECT_GT(mixed_links, 0);  // the grouping is honoured by a non-uniform answer
  }
}

TEST(AssignSolver, ZeroWeightMessagesStayAtSmallestBits) {
  AssignProblem p = random_problem(8, 300, 3, {2, 4, 8});
  for (size_t j = 0; j < p.messages.size(); j += 3) p.messages[j].weight = 0;
  const Assignment a = solve_assignment(p, options_for(Solver::kFast, 0.5));
  for (size_t j = 0; j < p.messages.size(); j += 3) EXPECT_EQ(a.bits[j], 2) << "message " << j;
}

// Row width 1: every bit-width costs the same bytes, so the largest is free and optimal.
TEST(AssignSolver, FreeUpgradesAreTaken) {
  AssignProblem p = random_problem(9, 100, 2, {2, 4, 8});
  p.row_width = 1;
  for (Message& m : p.messages) m.weight = 1;
  for (Solver solver : {Solver::kFast, Solver::kExact}) {
    const Assignment a = solve_assignment(p, options_for(solver, 0.5));
    EXPECT_TRUE(std::all_of(a.bits.begin(), a.bits.end(), [](uint8_t b) { return b == 8; }));
    EXPECT_NEAR(a.eval.objective, 0.0, 1e-12);
  }
}

TEST(AssignSolver, BudgetIsRespectedPerChannel) {
  const AssignProblem p = random_problem(10, 2000, 4, {2, 4, 8});
  const ObjectiveBounds bounds = objective_bounds(p);
  const BudgetSolver solver(p, 1);
  for (double f : {0.0, 0.1, 0.37, 0.8}) {
    const double tau = bounds.tmin + f * (bounds.tmax - bounds.tmin);
    const Evaluation e = evaluate(p, solver.assign(tau), 0.5);
    EXPECT_LE(e.time, tau) << "fraction " << f;
  }
  const std::vector<uint8_t> at_tmax = solver.assign(bounds.tmax);
  for (size_t j = 0; j < p.messages.size(); ++j) {
    EXPECT_EQ(at_tmax[j], p.messages[j].weight > 0 ? 8 : 2) << "message " << j;
  }
  const double best = solver.best_budget(0.5, bounds);
  EXPECT_GE(best, bounds.tmin);
  EXPECT_LE(best, bounds.tmax);
}

// Every budget's prefix objective is at least that of some breakpoint, so the swept best budget
// must beat a dense scan of budgets (checks the interval pruning of the sweep).
TEST(AssignSolver, BestBudgetBeatsDenseScan) {
  for (uint64_t seed : {12, 13}) {
    const AssignProblem p = random_problem(seed, 5000, 4, {2, 4, 8});
    const ObjectiveBounds bounds = objective_bounds(p);
    const BudgetSolver solver(p, 1);
    for (double lambda : {0.1, 0.5, 0.9}) {
      const double best_tau = solver.best_budget(lambda, bounds);
      const double best =
          normalized_objective(bounds, lambda, solver.prefix_variance(best_tau), best_tau);
      for (int k = 0; k <= 20000; ++k) {
        const double tau = bounds.tmin + (bounds.tmax - bounds.tmin) * k / 20000;
        ASSERT_LE(best,
                  normalized_objective(bounds, lambda, solver.prefix_variance(tau), tau) + 1e-12)
            << "seed " << seed << " lambda " << lambda << " tau " << tau;
      }
    }
  }
}

// A solver re-built over other problems (larger, smaller, other groups and bit sets, as the
// assigner re-builds its solvers every epoch) answers exactly like a fresh one.
TEST(AssignSolver, RebuildingReusesNothingButMemory) {
  BudgetSolver reused;
  EXPECT_TRUE(reused.assign(1.0).empty());
  struct Case {
    uint64_t seed;
    int n, world, group_size;
    std::vector<int> bits;
  };
  for (const Case& c : {Case{21, 3000, 4, 1, {2, 4, 8}}, Case{22, 500, 3, 1, {2, 8}},
                        Case{23, 4000, 4, 7, {2, 4, 8}}, Case{24, 800, 2, 1, {4}}}) {
    const AssignProblem p = random_problem(c.seed, c.n, c.world, c.bits);
    const BudgetSolver fresh(p, c.group_size);
    reused.build(p, c.group_size);
    const ObjectiveBounds bounds = objective_bounds(p);
    EXPECT_EQ(reused.best_budget(0.5, bounds), fresh.best_budget(0.5, bounds)) << c.seed;
    for (double f : {0.0, 0.3, 1.0}) {
      const double tau = bounds.tmin + f * (bounds.tmax - bounds.tmin);
      EXPECT_EQ(reused.prefix_variance(tau), fresh.prefix_variance(tau)) << c.seed << " " << f;
      EXPECT_EQ(reused.assign(tau), fresh.assign(tau)) << c.seed << " " << f;
    }
  }
}

TEST(AssignSolver, RejectsBadOptions) {
  const AssignProblem p = random_problem(11, 10, 2, {2, 4, 8});
  AssignOptions o;
  o.lambda = 1.5;
  EXPECT_THROW(solve_assignment(p, o), ConfigError);
  o.lambda = 0.5;
  o.group_size = 0;
  EXPECT_THROW(solve_assignment(p, o), ConfigError);
  EXPECT_EQ(parse_solver("exact"), Solver::kExact);
  EXPECT_EQ(parse_solver("fast"), Solver::kFast);
  EXPECT_THROW(parse_solver("gurobi"), ConfigError);
}

// Near lambda = 1 the variance outweighs the time of every upgrade: the best budget is the end of
// the budget range, the sweep's last breakpoint (every message at the widest width), which both
// channels reach at once here.
TEST(AssignSolver, LastBreakpointIsABudgetCandidate) {
  AssignProblem p;
  p.row_width = 10;
  p.time = per_sender_time_model({{1e-5, 1e-8}, {1e-5, 1e-8}});
  p.messages = {{0, 1, 1.0}, {1, 0, 2.0}};
  const ObjectiveBounds bounds = objective_bounds(p);
  const BudgetSolver solver(p, 1);
  EXPECT_EQ(solver.best_budget(0.99, bounds), bounds.tmax);
  for (Solver s : {Solver::kFast, Solver::kExact}) {
    const Assignment a = solve_assignment(p, options_for(s, 0.99));
    EXPECT_EQ(a.bits, (std::vector<uint8_t>{8, 8})) << to_string(s);
  }
}

// On a tie the smallest budget wins (budget_solver.h). One message, bits {2, 8}, lambda 0.5, one
// second per byte and d = 6 (rows of 10 and 14 bytes, Tmax - Tmin = 4 s): all at 2 bits and all at
// 8 bits both score 0.5, and the narrow width is kept.
TEST(AssignSolver, TiesGoToTheSmallestBudget) {
  AssignProblem p;
  p.row_width = 6;
  p.bits = {2, 8};
  p.time = per_sender_time_model({{0, 1}, {0, 1}});
  p.messages = {{0, 1, 3.0}};
  const ObjectiveBounds bounds = objective_bounds(p);
  ASSERT_EQ(bounds.tmin, 10.0);
  ASSERT_EQ(bounds.tmax, 14.0);
  const BudgetSolver solver(p, 1);
  // The tie, as the sweep computes it (a weight of 3 makes it exact in floating point).
  ASSERT_EQ(normalized_objective(bounds, 0.5, solver.prefix_variance(bounds.tmin), bounds.tmin),
            normalized_objective(bounds, 0.5, solver.prefix_variance(bounds.tmax), bounds.tmax));
  EXPECT_EQ(solver.best_budget(0.5, bounds), bounds.tmin);
  EXPECT_EQ(solve_assignment(p, options_for(Solver::kFast, 0.5)).bits, std::vector<uint8_t>{2});
}

// Groups of zero weight never leave the smallest width (budget_solver.h), also where the cheapest
// bytes buy more than one width (rows of 1 or 2 values: 2 and 4 bits cost the same bytes).
TEST(AssignSolver, ZeroWeightStaysAtSmallestBitsOnTinyRows) {
  for (const int64_t d : {1, 2}) {
    AssignProblem p = random_problem(8, 300, 3, {2, 4, 8});
    p.row_width = d;
    for (size_t j = 0; j < p.messages.size(); j += 3) p.messages[j].weight = 0;
    const Assignment a = solve_assignment(p, options_for(Solver::kFast, 0.5));
    const std::vector<uint8_t> at_tmax = BudgetSolver(p, 1).assign(objective_bounds(p).tmax);
    for (size_t j = 0; j < p.messages.size(); j += 3) {
      EXPECT_EQ(a.bits[j], 2) << "d " << d << ", message " << j;
      EXPECT_EQ(at_tmax[j], 2) << "d " << d << ", message " << j;
    }
  }
}

// Budgets hold for every row width and bit set, full precision included. With d = 3 and bits
// {2, 8, 32} a message's second step (8 bits -> full precision, 1 byte) is smaller than its first
// (2 -> 8 bits, 2 bytes): a message whose first step did not fit may find room for its second,
// which it must not take alone.
TEST(AssignSolver, BudgetIsRespectedForEveryRowWidthAndBitSet) {
  {
    AssignProblem p;
    p.row_width = 3;  // rows of 9, 11 and 12 bytes
    p.bits = {2, 8, quant::kFullPrecisionBits};
    p.time = per_sender_time_model({{0, 1}, {0, 1}});  // one second per byte
    // Greedy order: heavy 2 -> 8 (to 20 bytes), heavy 8 -> 32 (21), light 2 -> 8 (23, does not
    // fit in 22), light 8 -> 32 (22 if it were a step of its own).
    p.messages = {{0, 1, 1.0}, {0, 1, 1e-6}};
    const std::vector<uint8_t> bits = BudgetSolver(p, 1).assign(22.0);
    EXPECT_EQ(bits, (std::vector<uint8_t>{quant::kFullPrecisionBits, 2}));
    EXPECT_LE(evaluate(p, bits, 0.5).time, 22.0);
  }
  const std::vector<std::vector<int>> sets = {{2, 4, 8},
                                              {2, 8},
                                              {4, 8},
                                              {2, 4, 8, quant::kFullPrecisionBits},
                                              {2, 8, quant::kFullPrecisionBits},
                                              {4, quant::kFullPrecisionBits}};
  for (int64_t d = 1; d <= 12; ++d) {
    for (const std::vector<int>& bits : sets) {
      Draw draw(static_cast<uint64_t>(6000 + d));
      AssignProblem p;
      p.row_width = d;
      p.bits = bits;
      p.time = per_sender_time_model({{0, 1}, {0, 1}, {0, 1}});  // times are bytes
      p.messages = random_messages(draw, 60, 3);
      const BudgetSolver solver(p, 1);
      // From the time at the cheapest widths to that at the widest, byte by byte.
      const double low = evaluate(p, solver.assign(0), 0.5).time;
      const std::vector<uint8_t> widest(
          p.messages.size(), static_cast<uint8_t>(*std::max_element(bits.begin(), bits.end())));
      const double high = evaluate(p, widest, 0.5).time;
      for (double tau = low; tau <= high; tau += 1) {
        ASSERT_LE(evaluate(p, solver.assign(tau), 0.5).time, tau)
            << "d " << d << ", " << bits.size() << " widths up to " << bits.back() << ", tau "
            << tau;
      }
    }
  }
}

// At lambda = 1 (variance only) the widest width is full precision where it is allowed
// (docs/design.md, section 6: at lambda = 1 every exchange goes there); at lambda = 0 the width of
// the fewest bytes a row: the narrowest codec width, except for rows of 1 or 2 values, which are
// fewer bytes at full precision (4 or 8) than quantized (9), and where codec widths tie in bytes
// the widest of them.
TEST(AssignSolver, LambdaEndpointsWithFullPrecision) {
  const AssignProblem p = random_problem(5, 150, 3, {2, 4, 8, quant::kFullPrecisionBits});
  EXPECT_EQ(endpoint_width(1.0, p.bits, p.row_width), quant::kFullPrecisionBits);
  EXPECT_EQ(endpoint_width(0.0, p.bits, p.row_width), 2);
  EXPECT_EQ(endpoint_width(0.5, p.bits, p.row_width), 0);
  const std::vector<int> codec{8, 2, 4};
  const std::vector<int> full{2, 4, 8, quant::kFullPrecisionBits};
  for (int64_t d : {1, 2}) EXPECT_EQ(endpoint_width(0.0, full, d), quant::kFullPrecisionBits) << d;
  EXPECT_EQ(endpoint_width(0.0, full, 3), 2);   // 12 bytes at full precision, 9 at 2 bits
  EXPECT_EQ(endpoint_width(0.0, codec, 1), 8);  // 9 bytes at every codec width
  EXPECT_EQ(endpoint_width(0.0, codec, 2), 4);  // 9 bytes at 2 and 4 bits, 10 at 8
  EXPECT_EQ(endpoint_width(0.0, codec, 5), 2);  // 10 bytes at 2 bits, 11 at 4
  for (Solver solver : {Solver::kFast, Solver::kExact}) {
    AssignProblem tiny = random_problem(6, 40, 3, full);
    tiny.row_width = 2;
    const Assignment a = solve_assignment(tiny, options_for(solver, 0.0));
    EXPECT_EQ(a.bits, std::vector<uint8_t>(tiny.messages.size(), quant::kFullPrecisionBits));
  }
  for (Solver solver : {Solver::kFast, Solver::kExact}) {
    const Assignment all_full = solve_assignment(p, options_for(solver, 1.0));
    EXPECT_EQ(all_full.bits, std::vector<uint8_t>(p.messages.size(), quant::kFullPrecisionBits));
    EXPECT_EQ(all_full.eval.variance, 0.0);
    const Assignment all_min = solve_assignment(p, options_for(solver, 0.0));
    EXPECT_EQ(all_min.bits, std::vector<uint8_t>(p.messages.size(), 2));
  }
}

TEST(AssignSolver, RejectsNonFiniteLambdaAndTimeLimits) {
  const AssignProblem p = random_problem(11, 10, 2, {2, 4, 8});
  AssignOptions o;
  o.lambda = std::nan("");
  EXPECT_THROW(solve_assignment(p, o), ConfigError);
  o.lambda = 0.5;
  for (double limit : {0.0, -1.0, 2e6, std::nan("")}) {
    o.exact_time_limit_s = limit;
    EXPECT_THROW(validate(o), ConfigError) << limit;
  }
  o.exact_time_limit_s = 1e6;
  EXPECT_NO_THROW(validate(o));
}

// The order the bit set is listed in does not matter (the options are sorted by bytes, then by
// variance): rows of 1 value, where every codec width costs the same bytes and the widest is
// free, and rows of 64.
TEST(AssignSolver, BitSetOrderDoesNotMatter) {
  for (const int64_t d : {1, 64}) {
    AssignProblem p = random_problem(9, 100, 2, {2, 4, 8});
    p.row_width = d;
    const Assignment sorted = solve_assignment(p, options_for(Solver::kFast, 0.5));
    for (const std::vector<int>& bits :
         {std::vector<int>{8, 4, 2}, std::vector<int>{4, 8, 2}, std::vector<int>{8, 2, 4}}) {
      p.bits = bits;
      EXPECT_EQ(solve_assignment(p, options_for(Solver::kFast, 0.5)).bits, sorted.bits)
          << "d " << d << ", bits " << bits[0] << " " << bits[1] << " " << bits[2];
    }
  }
}

// A MILP that has no integer solution when its time limit stops it throws (solve.h). A limit below
// a millisecond is GLPK's tm_lim = 0: branch and bound stops at its first check, before any
// integer solution of this problem is found.
TEST(AssignSolver, ExactWithoutASolutionInItsTimeLimitThrows) {
  const AssignProblem p = random_problem(1001, 100, 3, {2, 4, 8});
  AssignOptions o = options_for(Solver::kExact, 0.5);
  o.exact_time_limit_s = 1e-4;
  const std::string error = test::error_of<Error>([&] { solve_assignment(p, o); });
  EXPECT_EQ(error.rfind("assign: exact solver: glp_intopt returned ", 0), 0u) << error;
}

}  // namespace
}  // namespace adaqp::assign
