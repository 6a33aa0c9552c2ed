#include "adaqp/assign/solve.h"

#include <algorithm>
#include <cmath>

#include "adaqp/assign/budget_solver.h"
#include "adaqp/common/error.h"
#include "exact_solver.h"

namespace adaqp::assign {

Solver parse_solver(const std::string& name) {
  if (name == "fast") return Solver::kFast;
  if (name == "exact") return Solver::kExact;
  throw ConfigError("must be one of fast, exact");
}

const char* to_string(Solver solver) {
  return solver == Solver::kExact ? "exact" : "fast";
}

Objective parse_objective(const std::string& name) {
  if (name == "seconds") return Objective::kSeconds;
  if (name == "normalized") return Objective::kNormalized;
  throw ConfigError("must be one of seconds, normalized");
}

const char* to_string(Objective objective) {
  return objective == Objective::kNormalized ? "normalized" : "seconds";
}

void validate(const AssignOptions& options) {
  if (!(options.lambda >= 0 && options.lambda <= 1)) {
    throw ConfigError("assign: lambda must be in [0, 1], got " + std::to_string(options.lambda));
  }
  if (options.group_size < 1) {
    throw ConfigError("assign: group_size must be >= 1, got " + std::to_string(options.group_size));
  }
  if (!(options.exact_time_limit_s > 0 && options.exact_time_limit_s <= 1e6)) {
    throw ConfigError("assign: exact_time_limit_s must be in (0, 1e6], got " +
                      std::to_string(options.exact_time_limit_s));
  }
}

int endpoint_width(double lambda, const std::vector<int>& bits, int64_t row_width) {
  if (lambda > 0 && lambda < 1) return 0;
  if (lambda >= 1) return *std::max_element(bits.begin(), bits.end());
  // Fewest bytes; among widths of as many bytes, the widest (less noise for no time). Full
  // precision is the fewest for rows of 1 or 2 values (4 or 8 bytes against 9 at 2 bits).
  int best = bits.front();
  for (const int b : bits) {
    const int64_t bytes = quant::message_bytes(row_width, b);
    const int64_t best_bytes = quant::message_bytes(row_width, best);
    if (bytes < best_bytes || (bytes == best_bytes && b > best)) best = b;
  }
  return best;
}

Assignment solve_assignment(const AssignProblem& problem, const AssignOptions& options) {
  validate(problem);
  validate(options);
  Assignment result;
  const int endpoint = endpoint_width(options.lambda, problem.bits, problem.row_width);
  if (endpoint != 0 || problem.messages.empty()) {
    const auto lo = std::min_element(problem.bits.begin(), problem.bits.end());
    result.bits.assign(problem.messages.size(),
                       static_cast<uint8_t>(endpoint != 0 ? endpoint : *lo));
  } else if (options.solver == Solver::kExact) {
    result = solve_exact(problem, options);
  } else {
    const BudgetSolver solver(problem, options.group_size);
    result.bits = solver.assign(solver.best_budget(options.lambda, objective_bounds(problem)));
  }
  result.eval = evaluate(problem, result.bits, options.lambda);
  return result;
}

}  // namespace adaqp::assign
