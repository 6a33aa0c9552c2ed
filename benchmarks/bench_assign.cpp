// The bit-width assignment solvers. (1) The fast budget solver at scale (default 1M messages,
// W = 8, bit set {2, 4, 8}; single-threaded): median time of the whole solve and of its parts,
// with the objective reached beside the best uniform bit-width's. (2) Exact MILP (GLPK) vs fast
// solver on instances both can solve: objectives, relative gap and times.
// Usage: bench_assign [--messages N] [--world W] [--repeats R]
#include <fmt/format.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "adaqp/assign/budget_solver.h"
#include "adaqp/assign/solve.h"
#include "adaqp/common/error.h"
#include "bench_options.h"

namespace {

using adaqp::assign::Assignment;
using adaqp::assign::AssignOptions;
using adaqp::assign::AssignProblem;
using Clock = std::chrono::steady_clock;

struct Options {
  int64_t messages = 1000000;
  int world = 8;
  int repeats = 7;
};

Options parse_options(int argc, char** argv) {
  Options opt;
  adaqp::bench::Options cli("bench_assign",
                            "The bit-width assignment solvers: fast at scale, exact vs fast");
  cli.add("--messages", &opt.messages, "messages of the large instance")
      .add("--world", &opt.world, "ranks of the large instance", 2)
      .add("--repeats", &opt.repeats, "solves timed (median reported)");
  cli.parse(argc, argv);
  return opt;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the calling thread: less disturbed than wall time on a shared machine.
double thread_cpu_seconds() {
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) {
    throw adaqp::Error("clock_gettime failed");
  }
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Row width 256, links of 10-110 us latency and 100-500 MB/s, skewed weights (some zero).
AssignProblem random_problem(uint64_t seed, int64_t n, int world) {
  std::mt19937_64 gen(seed);
  auto uniform = [&] { return static_cast<double>(gen() >> 11) * 0x1.0p-53; };
  AssignProblem p;
  p.row_width = 256;
  std::vector<adaqp::assign::LinkCost> costs(static_cast<size_t>(world) * world);
  for (auto& c : costs) c = {1e-5 + 1e-4 * uniform(), 1.0 / (1e8 + 4e8 * uniform())};
  p.time = adaqp::assign::per_link_time_model(world, costs);
  p.messages.resize(static_cast<size_t>(n));
  for (auto& m : p.messages) {
    m.sender = static_cast<int32_t>(gen() % world);
    m.receiver = static_cast<int32_t>((m.sender + 1 + gen() % (world - 1)) % world);
    const double u = uniform();
    m.weight = gen() % 20 == 0 ? 0.0 : 10 * u * u * u;
  }
  return p;
}

void bench_fast_at_scale(const Options& o) {
  const AssignProblem p = random_problem(1, o.messages, o.world);
  AssignOptions opt;
  std::vector<double> total, total_cpu, build, sweep, fill;
  Assignment result;
  for (int r = 0; r < o.repeats; ++r) {
    const double cpu_start = thread_cpu_seconds();
    auto start = Clock::now();
    result = adaqp::assign::solve_assignment(p, opt);
    total.push_back(seconds_since(start));
    total_cpu.push_back(thread_cpu_seconds() - cpu_start);
    // The same solve in parts (solve_assignment also validates and evaluates).
    start = Clock::now();
    const adaqp::assign::BudgetSolver solver(p, opt.group_size);
    build.push_back(seconds_since(start));
    start = Clock::now();
    const double tau = solver.best_budget(opt.lambda, adaqp::assign::objective_bounds(p));
    sweep.push_back(seconds_since(start));
    start = Clock::now();
    const std::vector<uint8_t> bits = solver.assign(tau);
    fill.push_back(seconds_since(start));
    if (bits != result.bits) throw adaqp::InvariantError("solves disagree");
  }
  double best_uniform = 1e300;
  int best_uniform_bits = 0;
  for (int b : p.bits) {
    const double obj =
        adaqp::assign::evaluate(p, std::vector<uint8_t>(p.messages.size(), b), opt.lambda)
            .objective;
    if (obj < best_uniform) {
      best_uniform = obj;
      best_uniform_bits = b;
    }
  }
  int64_t count[9] = {0};
  for (uint8_t b : result.bits) ++count[b];
  const double n = static_cast<double>(p.messages.size());
  std::cout << fmt::format(
                   "{{\"benchmark\":\"assign\",\"case\":\"fast_scale\",\"messages\":{},\"world\":"
                   "{},\"bits\":[2,4,8],\"lambda\":{},\"threads\":1,\"repeats\":{},"
                   "\"seconds_median\":{:.5f},\"cpu_seconds_median\":{:.5f},\"build_seconds_"
                   "median\":{:.5f},"
                   "\"sweep_seconds_median\":{:.5f},\"assign_seconds_median\":{:.5f},"
                   "\"objective\":{:.6f},\"best_uniform_objective\":{:.6f},"
                   "\"best_uniform_bits\":{},\"fraction_2\":{:.4f},\"fraction_4\":{:.4f},"
                   "\"fraction_8\":{:.4f}}}",
                   o.messages, o.world, opt.lambda, o.repeats, median(total), median(total_cpu),
                   median(build), median(sweep), median(fill), result.eval.objective, best_uniform,
                   best_uniform_bits, count[2] / n, count[4] / n, count[8] / n)
            << "\n";
  std::cout << fmt::format(
                   "# fast solver: {} messages, W={}: {:.1f} ms median of {} ({:.1f} ms CPU; build "
                   "{:.1f}, "
                   "sweep {:.1f}, assign {:.1f}); objective {:.4f} vs best uniform ({} bits) "
                   "{:.4f}",
                   o.messages, o.world, 1e3 * median(total), o.repeats, 1e3 * median(total_cpu),
                   1e3 * median(build), 1e3 * median(sweep), 1e3 * median(fill),
                   result.eval.objective, best_uniform_bits, best_uniform)
            << "\n";
}

void bench_exact_vs_fast() {
  const int64_t sizes[] = {50, 100, 200, 300};
  for (int64_t n : sizes) {
    for (uint64_t seed = 11; seed <= 12; ++seed) {
      const AssignProblem p = random_problem(seed * 1000 + static_cast<uint64_t>(n), n, 4);
      AssignOptions opt;
      opt.solver = adaqp::assign::Solver::kExact;
      opt.exact_time_limit_s = 60;
      auto start = Clock::now();
      const Assignment exact = adaqp::assign::solve_assignment(p, opt);
      const double exact_s = seconds_since(start);
      opt.solver = adaqp::assign::Solver::kFast;
      start = Clock::now();
      const Assignment fast = adaqp::assign::solve_assignment(p, opt);
      const double fast_s = seconds_since(start);
      const double gap = exact.eval.objective > 0
                             ? (fast.eval.objective - exact.eval.objective) / exact.eval.objective
                             : 0.0;
      std::cout
          << fmt::format(
                 "{{\"benchmark\":\"assign\",\"case\":\"exact_vs_fast\",\"messages\":{},"
                 "\"world\":4,\"seed\":{},\"lambda\":{},\"exact_objective\":{:.8f},"
                 "\"exact_proven_optimal\":{},\"exact_seconds\":{:.5f},"
                 "\"fast_objective\":{:.8f},\"fast_seconds\":{:.6f},\"relative_gap\":{:.6f}}}",
                 n, seed, opt.lambda, exact.eval.objective, exact.proven_optimal, exact_s,
                 fast.eval.objective, fast_s, gap)
          << "\n";
      std::cout << fmt::format(
                       "# n={:<4} seed={}: exact {:.6f} ({}{:.3f} s), fast {:.6f} ({:.2f} ms), gap "
                       "{:.4f}%",
                       n, seed, exact.eval.objective, exact.proven_optimal ? "" : "not proven, ",
                       exact_s, fast.eval.objective, 1e3 * fast_s, 100 * gap)
                << "\n";
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse_options(argc, argv);
    bench_fast_at_scale(o);
    bench_exact_vs_fast();
  } catch (const std::exception& e) {
    std::cerr << "bench_assign: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
