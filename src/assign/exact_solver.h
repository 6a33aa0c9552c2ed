// Internal to solve.cpp: the assignment problem as a mixed-integer program, solved by GLPK.
#pragma once

#include "adaqp/assign/solve.h"

namespace adaqp::assign {

// Binary x[i][k] (group i takes option k), sum_k x[i][k] = 1, and a continuous normalised time
// t >= (alpha_c + beta_c * bytes_c - Tmin) / (Tmax - Tmin) for every channel with messages;
// minimise lambda * (V - Vmin) / (Vmax - Vmin) + (1 - lambda) * t. Branch and bound with presolve,
// relative gap 0 and the options' time limit. Returns the bits (eval unset) and whether optimality
// was proven; throws Error if GLPK fails or has no solution within the time limit.
Assignment solve_exact(const AssignProblem& problem, const AssignOptions& options);

}  // namespace adaqp::assign
