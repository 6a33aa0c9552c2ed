#include "adaqp/train/bit_assigner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <string>
#include <utility>

#include "adaqp/assign/budget_solver.h"
#include "adaqp/assign/problem.h"
#include "adaqp/assign/variance_weight.h"
#include "adaqp/common/error.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp {

namespace {

constexpr int kCoeffTag = 32760;
constexpr int kBitsTag = 32761;
constexpr int kRounds = 3;       // refinements of the budget grid
constexpr int kCandidates = 17;  // budgets per round
constexpr Direction kDirs[2] = {Direction::kForward, Direction::kBackward};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Per peer: where the messages of `dir` that this rank sends (or receives) start.
const std::vector<int64_t>& send_offsets(const Part& p, Direction dir) {
  return dir == Direction::kForward ? p.send_offsets : p.halo_offsets;
}
const std::vector<int64_t>& recv_offsets(const Part& p, Direction dir) {
  return dir == Direction::kForward ? p.halo_offsets : p.send_offsets;
}

ExchangeBuffers empty_buffers(int world) {
  ExchangeBuffers b;
  b.send.assign(world, nullptr);
  b.send_bytes.assign(world, 0);
  b.recv.assign(world, nullptr);
  b.recv_bytes.assign(world, 0);
  return b;
}

int width_code(uint8_t bits) {
  return bits == 2 ? 0 : bits == 4 ? 1 : 2;
}

constexpr uint8_t kCodeWidth[3] = {2, 4, 8};

std::vector<MessageBits>& plan_bits(QuantPlan& plan, Direction dir) {
  return dir == Direction::kForward ? plan.forward : plan.backward;
}

}  // namespace

void validate(const AdaptiveOptions& opt) {
  if (opt.bit_set.empty()) throw ConfigError("communication.bit_set: must not be empty");
  for (size_t i = 0; i < opt.bit_set.size(); ++i) {
    const int b = opt.bit_set[i];
    if (!quant::valid_bits(b) || std::count(opt.bit_set.begin(), opt.bit_set.end(), b) > 1) {
      throw ConfigError(fmt::format(
          "communication.bit_set: [{}]: entry {} ({}) must be one of 2, 4, 8, each at most once",
          fmt::join(opt.bit_set, ", "), i, b));
    }
  }
  if (!(opt.lambda >= 0 && opt.lambda <= 1)) {
    throw ConfigError(fmt::format("communication.lambda: {} must be in [0, 1]", opt.lambda));
  }
  if (opt.group_size < 1) {
    throw ConfigError(fmt::format("communication.group_size: {} must be >= 1", opt.group_size));
  }
  if (opt.period < 1) {
    throw ConfigError(fmt::format("communication.assign_period: {} must be >= 1", opt.period));
  }
}

BitAssigner::BitAssigner(const DistGraph& graph, Communicator& comm, assign::TimeModel time,
                         int layers, const AdaptiveOptions& opt, uint64_t seed)
    : graph_(graph), comm_(comm), time_(std::move(time)), layers_(layers), opt_(opt), seed_(seed) {
  validate(opt_);
  std::sort(opt_.bit_set.begin(), opt_.bit_set.end());
  ADAQP_CHECK(time_.world_size == comm.size(),
              fmt::format("time model for {} ranks on {}", time_.world_size, comm.size()));
  // Column sums of the squared halo coefficients go to the owners of the columns.
  const Part& p = graph_.part();
  const kernels::CsrView& a = graph_.a_halo();
  std::vector<double> col(static_cast<size_t>(p.num_halo()), 0.0);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const double v = a.values[k];
      col[a.indices[k]] += v * v;
    }
  }
  coeff_sq_.assign(p.send_idx.size(), 0.0);
  ExchangeBuffers b = empty_buffers(p.num_parts);
  for (int r = 0; r < p.num_parts; ++r) {
    if (r == p.rank) continue;
    b.send[r] = col.data() + p.halo_offsets[r];
    b.send_bytes[r] = static_cast<size_t>(p.halo_count_from(r)) * sizeof(double);
    b.recv[r] = coeff_sq_.data() + p.send_offsets[r];
    b.recv_bytes[r] = static_cast<size_t>(p.send_count_to(r)) * sizeof(double);
  }
  comm_.exchange(b, kCoeffTag)->wait();
}

QuantPlan BitAssigner::plan(int epoch) {
  const double t0 = now_s();
  stats_.solved = false;
  std::vector<const MessageTrace*> traces;  // by direction, then layer
  bool traced = false;
  for (Direction dir : kDirs) {
    for (int l = 0; l < layers_; ++l) {
      traces.push_back(graph_.message_trace(l, dir));
      traced = traced || traces.back() != nullptr;
    }
  }
  const bool due = traced && (!solved_once_ || epoch - last_solve_ >= opt_.period);
  const Part& part = graph_.part();
  if (current_.forward.empty() || due) {
    const auto largest = static_cast<uint8_t>(opt_.bit_set.back());
    QuantPlan next;
    std::vector<assign::AssignProblem> problems;
    std::vector<MessageBits*> solved;
    for (Direction dir : kDirs) {
      std::vector<MessageBits>& bits = plan_bits(next, dir);
      bits.resize(layers_);
      for (int l = 0; l < layers_; ++l) {
        bits[l].recv.assign(recv_offsets(part, dir).back(), largest);
        bits[l].send.assign(send_offsets(part, dir).back(), largest);
        const MessageTrace* trace = traces[static_cast<int>(dir) * layers_ + l];
        if (!due || trace == nullptr) continue;
        problems.push_back(problem(l, dir, *trace));
        solved.push_back(&bits[l]);
      }
    }
    if (due) {
      std::vector<std::vector<uint8_t>> widths = solve(problems);
      for (size_t i = 0; i < solved.size(); ++i) solved[i]->send = std::move(widths[i]);
      distribute(next);
      solved_once_ = true;
      last_solve_ = epoch;
      stats_.solved = true;
    }
    current_ = std::move(next);
  }
  current_.seed = seed_;
  current_.epoch = static_cast<uint32_t>(epoch);
  current_.trace_ranges = true;
  stats_.assign_time_s = now_s() - t0;
  return current_;
}

assign::AssignProblem BitAssigner::problem(int layer, Direction dir,
                                           const MessageTrace& trace) const {
  const Part& part = graph_.part();
  const std::vector<int64_t>& offsets = send_offsets(part, dir);
  ADAQP_CHECK(static_cast<int64_t>(trace.ranges.size()) == offsets.back(),
              fmt::format("layer {} {}: {} traced ranges for {} messages", layer,
                          direction_name(dir), trace.ranges.size(), offsets.back()));
  assign::AssignProblem problem;
  problem.row_width = trace.width;
  problem.meta_bytes = quant::kMetaFloatsPerRow * static_cast<int64_t>(sizeof(float));
  problem.bits = opt_.bit_set;
  problem.time = time_;
  problem.messages.reserve(trace.ranges.size());
  for (int r = 0; r < part.num_parts; ++r) {
    for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
      const double range = trace.ranges[k];
      const double w = dir == Direction::kForward
                           ? assign::forward_variance_weight(coeff_sq_[k], trace.width, range)
                           : assign::backward_variance_weight(trace.width, range);
      problem.messages.push_back({part.rank, r, w});
    }
  }
  return problem;
}

std::vector<std::vector<uint8_t>> BitAssigner::solve(
    const std::vector<assign::AssignProblem>& problems) {
  // The endpoints need no search: variance only (largest widths) or time only (smallest).
  if (opt_.lambda >= 1 || opt_.lambda <= 0) {
    const auto b =
        static_cast<uint8_t>(opt_.lambda >= 1 ? opt_.bit_set.back() : opt_.bit_set.front());
    std::vector<std::vector<uint8_t>> widths;
    for (const assign::AssignProblem& p : problems) widths.emplace_back(p.messages.size(), b);
    return widths;
  }
  if (opt_.solver == assign::Solver::kExact) {
    std::vector<std::vector<uint8_t>> widths;
    for (const assign::AssignProblem& p : problems) widths.push_back(solve_exact(p));
    return widths;
  }
  return solve_fast(problems);
}

std::vector<std::vector<uint8_t>> BitAssigner::solve_fast(
    const std::vector<assign::AssignProblem>& problems) {
  const int world = comm_.size();
  const size_t n = problems.size();
  std::vector<assign::BudgetSolver> solvers;
  std::vector<double> local(4 * n), all(4 * n * world);
  for (size_t i = 0; i < n; ++i) {
    solvers.emplace_back(problems[i], opt_.group_size);
    const assign::ObjectiveBounds b = assign::objective_bounds(problems[i]);
    std::copy_n(std::array<double, 4>{b.vmin, b.vmax, b.tmin, b.tmax}.begin(), 4, &local[4 * i]);
  }
  comm_.allgather(local.data(), all.data(), local.size() * sizeof(double));
  std::vector<assign::ObjectiveBounds> bounds(n);
  for (int r = 0; r < world; ++r) {
    for (size_t i = 0; i < n; ++i) {
      const double* v = all.data() + 4 * (r * n + i);
      bounds[i] = assign::combine(bounds[i], assign::ObjectiveBounds{v[0], v[1], v[2], v[3]});
    }
  }
  // The global objective of problem i at budget tau: the summed prefix variances against tau.
  // Refine a grid around its best point, all problems in the same collectives; every rank sums the
  // same gathered values in rank order.
  std::vector<double> lo(n), hi(n), best_tau(n),
      best_obj(n, std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < n; ++i) {
    lo[i] = bounds[i].tmin;
    hi[i] = best_tau[i] = bounds[i].tmax;
  }
  std::vector<double> taus(kCandidates * n), prefix(kCandidates * n),
      gathered(prefix.size() * world);
  for (int round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < n; ++i) {
      for (int c = 0; c < kCandidates; ++c) {
        const size_t at = i * kCandidates + c;
        taus[at] = c + 1 == kCandidates ? hi[i] : lo[i] + (hi[i] - lo[i]) * c / (kCandidates - 1);
        prefix[at] = solvers[i].prefix_variance(taus[at]);
      }
    }
    comm_.allgather(prefix.data(), gathered.data(), prefix.size() * sizeof(double));
    for (size_t i = 0; i < n; ++i) {
      int best_c = 0;
      double round_best = std::numeric_limits<double>::infinity();
      for (int c = 0; c < kCandidates; ++c) {
        const size_t at = i * kCandidates + c;
        double v = 0;
        for (int r = 0; r < world; ++r) v += gathered[r * prefix.size() + at];
        const double obj = assign::normalized_objective(bounds[i], opt_.lambda, v, taus[at]);
        if (obj < round_best) {
          round_best = obj;
          best_c = c;
        }
      }
      if (round_best < best_obj[i]) {
        best_obj[i] = round_best;
        best_tau[i] = taus[i * kCandidates + best_c];
      }
      lo[i] = taus[i * kCandidates + std::max(best_c - 1, 0)];
      hi[i] = taus[i * kCandidates + std::min(best_c + 1, kCandidates - 1)];
    }
  }
  std::vector<std::vector<uint8_t>> widths;
  for (size_t i = 0; i < n; ++i) widths.push_back(solvers[i].assign(best_tau[i]));
  return widths;
}

std::vector<uint8_t> BitAssigner::solve_exact(const assign::AssignProblem& problem) {
  const int world = comm_.size();
  const auto n = static_cast<int64_t>(problem.messages.size());
  std::vector<int64_t> counts(world);
  comm_.allgather(&n, counts.data(), sizeof(int64_t));
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  std::vector<double> weights(most, 0.0), all_weights(most * world);
  std::vector<int32_t> receivers(most, 0), all_receivers(most * world);
  for (int64_t j = 0; j < n; ++j) {
    weights[j] = problem.messages[j].weight;
    receivers[j] = problem.messages[j].receiver;
  }
  comm_.allgather(weights.data(), all_weights.data(), most * sizeof(double));
  comm_.allgather(receivers.data(), all_receivers.data(), most * sizeof(int32_t));
  int64_t total = 0, offset = 0;
  for (int r = 0; r < world; ++r) {
    if (r < comm_.rank()) offset += counts[r];
    total += counts[r];
  }
  std::vector<uint8_t> bits(static_cast<size_t>(total));
  if (comm_.rank() == 0) {
    assign::AssignProblem global = problem;
    global.messages.clear();
    for (int r = 0; r < world; ++r) {
      for (int64_t j = 0; j < counts[r]; ++j) {
        global.messages.push_back({r, all_receivers[r * most + j], all_weights[r * most + j]});
      }
    }
    assign::AssignOptions ao;
    ao.solver = assign::Solver::kExact;
    ao.lambda = opt_.lambda;
    ao.group_size = opt_.group_size;
    bits = assign::solve_assignment(global, ao).bits;
  }
  comm_.broadcast(bits.data(), bits.size(), 0);
  return std::vector<uint8_t>(bits.begin() + offset, bits.begin() + offset + n);
}

void BitAssigner::distribute(QuantPlan& plan) {
  const Part& part = graph_.part();
  const int world = part.num_parts;
  // Per peer, the widths of every layer and direction in plan order, 2 bits each.
  std::vector<std::vector<uint8_t>> out(world), in(world);
  ExchangeBuffers b = empty_buffers(world);
  for (int r = 0; r < world; ++r) {
    if (r == part.rank) continue;
    int64_t sent = 0, received = 0;
    for (Direction dir : kDirs) {
      for (const MessageBits& mb : plan_bits(plan, dir)) {
        const std::vector<int64_t>& so = send_offsets(part, dir);
        for (int64_t k = so[r]; k < so[r + 1]; ++k, ++sent) {
          if (sent % 4 == 0) out[r].push_back(0);
          out[r].back() |= static_cast<uint8_t>(width_code(mb.send[k]) << (2 * (sent % 4)));
        }
        received += recv_offsets(part, dir)[r + 1] - recv_offsets(part, dir)[r];
      }
    }
    in[r].resize(static_cast<size_t>((received + 3) / 4));
    b.send[r] = out[r].data();
    b.send_bytes[r] = out[r].size();
    b.recv[r] = in[r].data();
    b.recv_bytes[r] = in[r].size();
  }
  comm_.exchange(b, kBitsTag)->wait();
  for (int r = 0; r < world; ++r) {
    if (r == part.rank) continue;
    int64_t pos = 0;
    for (Direction dir : kDirs) {
      for (MessageBits& mb : plan_bits(plan, dir)) {
        const std::vector<int64_t>& ro = recv_offsets(part, dir);
        for (int64_t k = ro[r]; k < ro[r + 1]; ++k, ++pos) {
          const int code = (in[r][pos / 4] >> (2 * (pos % 4))) & 3;
          if (code > 2) {
            throw CommError(fmt::format("bit-width vector from rank {} on rank {}: code {} at {}",
                                        r, part.rank, code, pos));
          }
          mb.recv[k] = kCodeWidth[code];
        }
      }
    }
  }
}

const AssignStats& BitAssigner::finish_epoch() {
  const Part& part = graph_.part();
  const size_t layers = static_cast<size_t>(layers_);
  std::vector<double> predicted(2 * layers, 0.0);
  stats_.hist_forward.assign(layers, {0, 0, 0});
  stats_.hist_backward.assign(layers, {0, 0, 0});
  for (Direction dir : kDirs) {
    const std::vector<MessageBits>& bits = plan_bits(current_, dir);
    auto& hist = dir == Direction::kForward ? stats_.hist_forward : stats_.hist_backward;
    for (size_t l = 0; l < layers; ++l) {
      const MessageTrace* trace = graph_.message_trace(static_cast<int>(l), dir);
      if (trace == nullptr) continue;  // not exchanged
      int64_t bytes = 0;
      for (uint8_t b : bits[l].send) {
        ++hist[l][width_code(b)];
        bytes += quant::packed_row_bytes(trace->width, b) + quant::kMetaFloatsPerRow * 4;
      }
      if (part.num_parts > 1) {
        const int32_t channel = time_.channel(part.rank, (part.rank + 1) % part.num_parts);
        predicted[static_cast<int>(dir) * layers + l] = time_.channel_time(channel, bytes);
      }
    }
  }
  comm_.allreduce_max(predicted.data(), predicted.size());
  stats_.predicted_forward_s.assign(predicted.begin(), predicted.begin() + layers_);
  stats_.predicted_backward_s.assign(predicted.begin() + layers_, predicted.end());
  return stats_;
}

}  // namespace adaqp
