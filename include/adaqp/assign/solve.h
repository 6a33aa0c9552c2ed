// Solving an assignment problem (problem.h): the fast budget solver (budget_solver.h) or, for small
// jobs and as the referee in tests, the exact MILP (GLPK).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/assign/problem.h"

namespace adaqp::assign {

enum class Solver { kFast, kExact };

// "fast" | "exact"; ConfigError "must be one of fast, exact" otherwise (the caller names the key).
Solver parse_solver(const std::string& name);
const char* to_string(Solver solver);

// What the adaptive scheme minimises per exchange (docs/design.md, section 6). kSeconds: the
// exposed exchange time plus the variance priced in seconds at the normalised objective's rate,
// with full precision (no codec) among the choices, so an exchange is quantized only where that
// saves exposed time. kNormalized: the paper's normalised objective over the codec widths alone.
enum class Objective { kSeconds, kNormalized };

// "seconds" | "normalized"; ConfigError "must be one of seconds, normalized" otherwise.
Objective parse_objective(const std::string& name);
const char* to_string(Objective objective);

struct AssignOptions {
  Solver solver = Solver::kFast;
  double lambda = 0.5;  // weight of the variance term, in [0, 1]
  // Consecutive messages of one link (in input order) form groups of this many that share one
  // bit-width; 1 = per message.
  int group_size = 1;
  double exact_time_limit_s = 60;  // bound on the MILP's branch and bound, > 0
};

// Throws ConfigError naming the option and its value.
void validate(const AssignOptions& options);

// The lambda end points need no search and give the canonical optimum among ties: the width every
// message of rows of `row_width` values gets at lambda = 1 (variance only: the widest of `bits`) or
// lambda = 0 (time only: the fewest bytes a row, quant::message_bytes; of widths that tie, the
// widest); 0 for lambda inside (0, 1).
int endpoint_width(double lambda, const std::vector<int>& bits, int64_t row_width);

struct Assignment {
  std::vector<uint8_t> bits;  // per message, in input order; always in the allowed bit set
  Evaluation eval;
  // Exact solver: optimality was proven within the time limit, up to GLPK's objective tolerance
  // (relative 1e-7; otherwise the best solution found is returned). Fast solver and the lambda
  // endpoints: false.
  bool proven_optimal = false;
};

// Validates both arguments, then solves. At the lambda end points every message gets
// endpoint_width's width. Deterministic: the same input gives the same
// output. Throws Error if the exact solver fails or finds no solution within its time limit.
Assignment solve_assignment(const AssignProblem& problem, const AssignOptions& options);

}  // namespace adaqp::assign
