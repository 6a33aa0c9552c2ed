#include "adaqp/assign/adaptive_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#include "adaqp/assign/problem.h"
#include "adaqp/assign/variance_weight.h"
#include "adaqp/comm/clock_offset.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp {

namespace {

constexpr int kCoeffTag = 32760;
constexpr int kBackwardCoeffTag = 32765;
constexpr int kBitsTag = 32761;
// Budgets evaluated, evenly over [tmin, tmax] (resolution (tmax - tmin) / 256), in one collective.
constexpr int kCandidates = 257;
constexpr Direction kDirs[2] = {Direction::kForward, Direction::kBackward};
// The widths exchange (AdaptivePolicy::distribute) sends a message width in 2 bits.
static_assert(quant::kNumMessageWidths == 4, "a message width code is 2 bits");
std::vector<MessageBits>& plan_bits(QuantPlan& plan, Direction dir) {
  return dir == Direction::kForward ? plan.forward : plan.backward;
}

const std::vector<MessageBits>& plan_bits(const QuantPlan& plan, Direction dir) {
  return dir == Direction::kForward ? plan.forward : plan.backward;
}

// Whether some exchange of the plan travels at full precision.
bool any_full_precision(const QuantPlan& plan) {
  for (Direction dir : kDirs) {
    for (const MessageBits& b : plan_bits(plan, dir)) {
      if (b.full_precision) return true;
    }
  }
  return false;
}

// Sends one value per message of `dir` (values in send order) along the messages' path and returns
// the values received, one per message this rank receives in `dir` (collective).
std::vector<double> send_along(Communicator& comm, const Boundary& p, Direction dir,
                               const std::vector<double>& values, int tag) {
  const std::vector<int64_t>& out = send_offsets(p, dir);
  const std::vector<int64_t>& in = recv_offsets(p, dir);
  std::vector<double> received(static_cast<size_t>(in.back()), 0.0);
  ExchangeBuffers b = ExchangeBuffers::none(p.num_parts);
  for (int r = 0; r < p.num_parts; ++r) {
    if (r == p.rank) continue;
    b.send[r] = values.data() + out[r];
    b.send_bytes[r] = static_cast<size_t>(out[r + 1] - out[r]) * sizeof(double);
    b.recv[r] = received.data() + in[r];
    b.recv_bytes[r] = static_cast<size_t>(in[r + 1] - in[r]) * sizeof(double);
  }
  comm.exchange(b, {tag})->wait();
  return received;
}

// Runs f(i) for every i in [0, n) on the compute threads, each whole on one thread: the problems of
// one solve are independent, so the widths are those of a serial solve. On a GPU the host would
// otherwise solve them one after another while the device waits (1.2M messages a rank per epoch at
// ogbn-products' shape and W=2 took half the epoch). The first exception is rethrown here.
template <class F>
void for_each_problem(size_t n, const F& f) {
  std::vector<std::exception_ptr> errors(n);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) {
    try {
      f(static_cast<size_t>(i));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// The slowest channel of an exchange in which sender s sends pairs[s * world + r] messages of
// row_bytes bytes to each r, under `time`, plus extra_s[s] on each of s's channels (null: 0).
double slowest_channel(const assign::TimeModel& time, const std::vector<int64_t>& pairs,
                       int64_t row_bytes, const double* extra_s) {
  const int world = time.world_size;
  std::vector<int64_t> bytes(time.channels.size());
  double t = 0;
  for (int s = 0; s < world; ++s) {
    std::fill(bytes.begin(), bytes.end(), 0);
    for (int r = 0; r < world; ++r) {
      if (r != s)
        bytes[time.channel(s, r)] += pairs[static_cast<size_t>(s) * world + r] * row_bytes;
    }
    for (size_t c = 0; c < bytes.size(); ++c) {
      if (bytes[c] == 0) continue;
      t = std::max(t, (extra_s != nullptr ? extra_s[s] : 0.0) +
                          time.channel_time(static_cast<int32_t>(c), bytes[c]));
    }
  }
  return t;
}

}  // namespace

void validate(const AdaptiveOptions& opt) {
  if (opt.bit_set.empty()) throw ConfigError("communication.bit_set: must not be empty");
  for (size_t i = 0; i < opt.bit_set.size(); ++i) {
    const int b = opt.bit_set[i];
    if (!quant::valid_bits(b)) {
      throw ConfigError(fmt::format("communication.bit_set: [{}]: entry {}: {}",
                                    fmt::join(opt.bit_set, ", "), i, quant::not_a_width(b)));
    }
    if (std::count(opt.bit_set.begin(), opt.bit_set.end(), b) > 1) {
      throw ConfigError(fmt::format("communication.bit_set: [{}]: entry {} ({}) is listed twice",
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
  if (!(opt.resolve_drift >= 0 && opt.resolve_drift <= 1e6)) {
    throw ConfigError(
        fmt::format("communication.resolve_drift: {} must be in [0, 1e6]", opt.resolve_drift));
  }
}

AdaptivePolicy::AdaptivePolicy(const Boundary& boundary, const kernels::CsrView& a_halo,
                               Communicator& comm, assign::TimeModel time, int layers,
                               const AdaptiveOptions& opt, uint64_t seed, bool measured_times,
                               const kernels::CsrView* send_matrix)
    : boundary_(boundary),
      comm_(comm),
      time_(std::move(time)),
      layers_(layers),
      opt_(opt),
      seed_(seed),
      measured_times_(measured_times),
      schedule_(measured_times && opt.objective == assign::Objective::kSeconds && comm.size() > 1,
                boundary.rank == 0) {
  validate(opt_);
  std::sort(opt_.bit_set.begin(), opt_.bit_set.end());
  codec_s_.assign(2 * static_cast<size_t>(layers_) * comm.size(), 0.0);
  range_sq_.assign(2 * static_cast<size_t>(layers_) * comm.size(), 0.0);
  hidden_s_.assign(2 * static_cast<size_t>(layers_), 0.0);
  solved_inputs_.resize(2 * static_cast<size_t>(layers_));
  full_since_.assign(2 * static_cast<size_t>(layers_), -1);
  send_counts_.resize(2 * static_cast<size_t>(layers_));
  ADAQP_CHECK_EQ(time_.world_size, comm.size(), "the time model's ranks, the communicator's");
  // Column sums of the squared halo coefficients go to the owners of the columns.
  const Boundary& p = boundary_;
  const kernels::CsrView& a = a_halo;
  ADAQP_CHECK_EQ(a.cols, p.recvs(), "halo block columns, received rows");
  std::vector<double> col(static_cast<size_t>(p.recvs()), 0.0);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = a.indptr[i]; k < a.indptr[i + 1]; ++k) {
      const double v = a.values[k];
      col[a.indices[k]] += v * v;
    }
  }
  // The column of a received row goes back to its sender: the path of backward messages.
  coeff_sq_ = send_along(comm_, p, Direction::kBackward, col, kCoeffTag);
  // Backward through a send matrix: row sums of its squared coefficients go to the receivers of
  // the rows, who send those rows' gradients.
  if (send_matrix != nullptr) {
    const kernels::CsrView& s = *send_matrix;
    ADAQP_CHECK_EQ(s.rows, p.sends(), "send matrix rows, sent rows");
    std::vector<double> row(static_cast<size_t>(p.sends()), 0.0);
    for (int64_t k = 0; k < s.rows; ++k) {
      for (int64_t e = s.indptr[k]; e < s.indptr[k + 1]; ++e) {
        row[k] += static_cast<double>(s.values[e]) * s.values[e];
      }
    }
    backward_coeff_sq_ = send_along(comm_, p, Direction::kForward, row, kBackwardCoeffTag);
  }
  for (Direction dir : kDirs) {
    std::vector<int64_t>& counts = pair_messages_[static_cast<int>(dir)];
    counts.resize(static_cast<size_t>(p.num_parts) * p.num_parts);
    std::vector<int64_t> mine(p.num_parts);
    const std::vector<int64_t>& out = send_offsets(p, dir);
    for (int r = 0; r < p.num_parts; ++r) mine[r] = out[r + 1] - out[r];
    comm_.allgather(mine.data(), counts.data(), mine.size() * sizeof(int64_t));
  }
  per_link_full_ = opt_.objective == assign::Objective::kSeconds && !time_.class_of_channel.empty();
  clock_offset_s_ = estimate_clock_offset(comm_);
  if (opt_.background_solve) {
    solve_comm_ = comm_.host_duplicate();
    if (solve_comm_ == nullptr && boundary_.rank == 0) {
      spdlog::warn(
          "communication.solve_schedule: the width solve runs inline (the transport gives no "
          "second communicator for a thread: MPI without MPI_THREAD_MULTIPLE, or a wrapped one)");
    }
  }
}

AdaptivePolicy::~AdaptivePolicy() {
  if (!solver_thread_.joinable()) return;
  solver_thread_.join();
  // The last solve launched is never adopted: what it threw is only reported.
  if (!pending_.error) return;
  try {
    std::rethrow_exception(pending_.error);
  } catch (const std::exception& e) {
    spdlog::warn("rank {}: the last background width solve failed: {}", boundary_.rank, e.what());
  } catch (...) {
    spdlog::warn("rank {}: the last background width solve failed", boundary_.rank);
  }
}

const QuantPlan& AdaptivePolicy::plan(int epoch, const MessageTraces& message_traces) {
  const double t0 = steady_now_s();
  plan_start_s_ = t0;
  stats_.solved = false;
  stats_.background_solve_s = 0;
  const Boundary& part = boundary_;
  const auto largest = static_cast<uint8_t>(opt_.bit_set.back());
  if (current_.forward.empty()) {
    for (Direction dir : kDirs) {
      std::vector<MessageBits>& bits = plan_bits(current_, dir);
      bits.resize(layers_);
      for (int l = 0; l < layers_; ++l) {
        bits[l].recv.assign(recv_offsets(part, dir).back(), largest);
        bits[l].send.assign(send_offsets(part, dir).back(), largest);
        send_counts_[static_cast<int>(dir) * layers_ + l] = count_widths(bits[l].send, dir, l);
      }
    }
  }
  adopt_pending(epoch);
  std::vector<const MessageTrace*> traces;  // by direction, then layer
  bool traced = false;
  for (Direction dir : kDirs) {
    for (int l = 0; l < layers_; ++l) {
      traces.push_back(message_traces.find(l, dir));
      traced = traced || traces.back() != nullptr;
    }
  }
  if (schedule_.trial_due(any_full_precision(current_), vanilla_comm_time(traces))) {
    const bool of_scheme = schedule_.vanilla_schedule();
    schedule_.start_trial();
    // The scheme's plans as its last epoch left them run its trial.
    if (of_scheme) restore_saved_full();
  }
  const bool scheme_ran = current_.overlap;  // the last epoch's schedule
  current_.overlap = schedule_.overlap();
  if (!current_.overlap) {
    // Vanilla's schedule: every exchange at full precision, no overlap, nothing to solve. Handed
    // over from the scheme (a trial of Vanilla's, or a lost trial of the scheme), the scheme's
    // choices are kept for its return: its latest ones, which its widths, refresh ages and solved
    // inputs belong to.
    if (scheme_ran) {
      saved_full_.clear();
      for (Direction dir : kDirs) {
        for (const MessageBits& b : plan_bits(current_, dir))
          saved_full_.push_back(b.full_precision);
      }
    }
    for (Direction dir : kDirs) {
      for (MessageBits& b : plan_bits(current_, dir)) b.full_precision = true;
    }
    current_.seed = seed_;
    current_.epoch = static_cast<uint32_t>(epoch);
    stats_.assign_time_s = steady_now_s() - t0;
    return current_;
  }
  // With measured times, the first epoch's codec time is a cold start's: wait for a second.
  const bool warm = !measured_times_ || traced_epochs_ >= 2;
  const bool due = traced && warm && (!solved_once_ || epoch - last_solve_ >= opt_.period);
  std::vector<bool> refreshed(2 * static_cast<size_t>(layers_), false);
  for (Direction dir : kDirs) {
    std::vector<MessageBits>& bits = plan_bits(current_, dir);
    for (int l = 0; l < layers_; ++l) {
      const size_t at = static_cast<int>(dir) * layers_ + l;
      // Measured slower: every exchange at full precision is traced once more, then solved.
      if (full_since_[at] < 0 ||
          (epoch - full_since_[at] < kRefreshEpochs && !schedule_.full_precision_given_up()))
        continue;
      bits[l].full_precision = false;  // one epoch at the largest width, traced
      std::fill(bits[l].send.begin(), bits[l].send.end(), largest);
      std::fill(bits[l].recv.begin(), bits[l].recv.end(), largest);
      send_counts_[at] = count_widths(bits[l].send, dir, l);
      full_since_[at] = -1;
      solved_inputs_[at].valid = false;
      refreshed[at] = true;
    }
  }
  if (due) {
    const bool seconds = opt_.objective == assign::Objective::kSeconds;
    const bool given_up = schedule_.full_precision_given_up();
    const bool per_link_full = per_link_full_ && !given_up;
    std::vector<Direction> dirs;  // of each problem
    std::vector<size_t> at_of;
    std::vector<double> full_s;
    for (Direction dir : kDirs) {
      std::vector<MessageBits>& bits = plan_bits(current_, dir);
      for (int l = 0; l < layers_; ++l) {
        const size_t at = static_cast<int>(dir) * layers_ + l;
        const MessageTrace* trace = traces[at];
        if (trace == nullptr || refreshed[at]) continue;
        const double full = given_up
                                ? std::numeric_limits<double>::infinity()
                                : uniform_time(at, dir, trace->width, quant::kFullPrecisionBits);
        const double narrow = uniform_time(at, dir, trace->width, opt_.bit_set.front());
        if (seconds && !given_up && (opt_.lambda >= 1 || full <= narrow)) {
          bits[l].full_precision = true;  // no time to save: no solve, no trace
          if (full_since_[at] < 0) full_since_[at] = epoch;
          solved_inputs_[at].valid = false;  // once time can be saved, solve afresh
          continue;
        }
        const SolvedInputs& last = solved_inputs_[at];
        const bool options_changed = last.valid && last.per_link_full != per_link_full;
        if (!options_changed && drift(at) < opt_.resolve_drift) continue;
        ADAQP_CHECK_EQ(static_cast<int64_t>(trace->ranges.size()), send_offsets(part, dir).back(),
                       fmt::format("layer {} {}: traced ranges, messages", l, direction_name(dir)));
        if (inputs_.size() <= at_of.size()) inputs_.resize(at_of.size() + 1);
        ProblemInputs& in = inputs_[at_of.size()];
        in.layer = l;
        in.dir = dir;
        in.width = trace->width;
        in.ranges.assign(trace->ranges.begin(), trace->ranges.end());
        dirs.push_back(dir);
        at_of.push_back(at);
        full_s.push_back(full);
      }
    }
    if (!at_of.empty()) {
      for (size_t at : at_of) {
        SolvedInputs& in = solved_inputs_[at];
        in.valid = true;
        in.per_link_full = per_link_full;
        in.range_sq.resize(part.num_parts);
        for (int r = 0; r < part.num_parts; ++r) {
          in.range_sq[r] = range_sq_[r * 2 * static_cast<size_t>(layers_) + at];
        }
      }
      pending_.at = std::move(at_of);
      pending_.dirs = std::move(dirs);
      pending_.full_s = std::move(full_s);
      pending_.times = SolveTimes{codec_s_, hidden_s_, per_link_full};
      // The first solve inline: until it, every message travels at the largest width.
      if (solve_comm_ != nullptr && widths_solved_) {
        // The thread's OpenMP teams as wide as the caller's: a new thread starts from the
        // process default (every core), whose idle team threads would spin beside the compute.
        solver_thread_ = std::thread([this, threads = omp_get_max_threads()] {
          omp_set_num_threads(threads);
          run_pending();
        });
        solver_launched_ = true;
      } else {
        run_pending();
        adopt_pending(epoch);
      }
    }
    solved_once_ = true;
    last_solve_ = epoch;
  }
  current_.seed = seed_;
  current_.epoch = static_cast<uint32_t>(epoch);
  current_.trace_ranges = true;
  stats_.assign_time_s = steady_now_s() - t0;
  return current_;
}

void AdaptivePolicy::run_pending() {
  try {
    const double t0 = steady_now_s();
    problems_.resize(pending_.dirs.size());
    for_each_problem(problems_.size(),
                     [&](size_t i) { fill_problem(inputs_[i], pending_.times, problems_[i]); });
    std::vector<Solution> solutions = solve(problems_, pending_.dirs, pending_.full_s);
    pending_.bits.resize(solutions.size());
    pending_.counts.resize(solutions.size());
    std::vector<MessageBits*> quantized;
    std::vector<Direction> quantized_dirs;
    for (size_t i = 0; i < solutions.size(); ++i) {
      MessageBits& b = pending_.bits[i];
      b.full_precision = solutions[i].full_precision;
      if (b.full_precision) continue;
      b.send = std::move(solutions[i].widths);
      b.recv.resize(recv_offsets(boundary_, pending_.dirs[i]).back());
      quantized.push_back(&b);
      quantized_dirs.push_back(pending_.dirs[i]);
    }
    distribute(quantized, quantized_dirs);
    // After the last collective: a rank that throws here leaves no peer waiting in one.
    for (size_t i = 0; i < solutions.size(); ++i) {
      const MessageBits& b = pending_.bits[i];
      if (!b.full_precision) {
        pending_.counts[i] = count_widths(b.send, pending_.dirs[i], inputs_[i].layer);
      }
    }
    pending_.seconds = steady_now_s() - t0;
  } catch (...) {
    pending_.error = std::current_exception();
  }
}

void AdaptivePolicy::adopt_pending(int epoch) {
  if (solver_thread_.joinable()) solver_thread_.join();
  if (pending_.at.empty()) return;
  PendingSolve done = std::move(pending_);
  pending_ = PendingSolve{};
  if (done.error) std::rethrow_exception(done.error);
  for (size_t i = 0; i < done.at.size(); ++i) {
    const size_t at = done.at[i];
    MessageBits& bits = plan_bits(current_, done.dirs[i])[at % static_cast<size_t>(layers_)];
    MessageBits& solved = done.bits[i];
    bits.full_precision = solved.full_precision;
    int& since = full_since_[at];
    since = solved.full_precision ? (since < 0 ? epoch : since) : -1;
    if (solved.full_precision) continue;
    bits.send = std::move(solved.send);
    bits.recv = std::move(solved.recv);
    send_counts_[at] = std::move(done.counts[i]);
  }
  stats_.solved = true;
  if (solver_launched_) stats_.background_solve_s = done.seconds;
  solver_launched_ = false;
  widths_solved_ = true;
}

void AdaptivePolicy::restore_saved_full() {
  size_t at = 0;
  for (Direction dir : kDirs) {
    for (MessageBits& b : plan_bits(current_, dir)) b.full_precision = saved_full_[at++];
  }
}

double AdaptivePolicy::vanilla_comm_time(const std::vector<const MessageTrace*>& traces) const {
  double t = 0;
  for (size_t at = 0; at < traces.size(); ++at) {
    if (traces[at] == nullptr) continue;
    const Direction dir =
        at < static_cast<size_t>(layers_) ? Direction::kForward : Direction::kBackward;
    t += slowest_channel(time_, pair_messages_[static_cast<int>(dir)],
                         quant::full_precision_bytes(traces[at]->width), nullptr);
  }
  return t;
}

double AdaptivePolicy::uniform_time(size_t at, Direction dir, int64_t d, int bits) const {
  if (comm_.size() == 1) return hidden_s_[at];
  const size_t exchanges = 2 * static_cast<size_t>(layers_);
  std::vector<double> codec(comm_.size(), 0.0);
  for (int r = 0; bits != quant::kFullPrecisionBits && r < comm_.size(); ++r) {
    codec[r] = codec_s_[r * exchanges + at];
  }
  return std::max(hidden_s_[at], slowest_channel(time_, pair_messages_[static_cast<int>(dir)],
                                                 quant::message_bytes(d, bits), codec.data()));
}

double AdaptivePolicy::drift(size_t at) const {
  const SolvedInputs& in = solved_inputs_[at];
  if (!in.valid) return std::numeric_limits<double>::infinity();
  const size_t exchanges = 2 * static_cast<size_t>(layers_);
  double d = 0;
  for (size_t r = 0; r < in.range_sq.size(); ++r) {
    const double now = range_sq_[r * exchanges + at], then = in.range_sq[r];
    if (now == then) continue;
    d = std::max(d, then > 0 && std::isfinite(now) ? std::abs(now - then) / then
                                                   : std::numeric_limits<double>::infinity());
  }
  return d;
}

bool AdaptivePolicy::full_precision_wins(const assign::ObjectiveBounds& bounds, double tau,
                                         double v, double full_s) const {
  // The normalised objective is (1 - lambda) / (tmax - tmin) * (T + mu V) plus a constant, with
  // mu = lambda / (1 - lambda) * (tmax - tmin) / (vmax - vmin): the same trade of noise against
  // time, in seconds, where full precision (no variance) can be weighed against it. Without a
  // time range (every width as fast) there is no such trade: full precision must cost no time.
  if (bounds.tmax > bounds.tmin && bounds.vmax > bounds.vmin) {
    const double mu =
        opt_.lambda / (1 - opt_.lambda) * (bounds.tmax - bounds.tmin) / (bounds.vmax - bounds.vmin);
    return full_s <= tau + mu * v;
  }
  return full_s <= tau;
}

void AdaptivePolicy::fill_problem(const ProblemInputs& in, const SolveTimes& times,
                                  assign::AssignProblem& problem) const {
  const Boundary& part = boundary_;
  const Direction dir = in.dir;
  const std::vector<int64_t>& offsets = send_offsets(part, dir);
  problem.row_width = in.width;
  problem.bits = opt_.bit_set;
  if (times.per_link_full) problem.bits.push_back(quant::kFullPrecisionBits);
  problem.time = time_;
  const size_t exchanges = 2 * static_cast<size_t>(layers_);
  const size_t at = static_cast<int>(dir) * layers_ + in.layer;
  problem.hidden_s = times.hidden_s[at];
  // Each sender's codec time on each of its channels: packing and unpacking run on the thread
  // that drives all of them.
  std::vector<bool> charged(time_.channels.size(), false);
  for (int r = 0; r < part.num_parts; ++r) {
    for (int q = 0; q < part.num_parts; ++q) {
      if (q == r || charged[time_.channel(r, q)]) continue;
      charged[time_.channel(r, q)] = true;
      problem.time.channels[time_.channel(r, q)].alpha += times.codec_s[r * exchanges + at];
    }
  }
  problem.messages.clear();
  problem.messages.reserve(in.ranges.size());
  for (int r = 0; r < part.num_parts; ++r) {
    for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) {
      const double range = in.ranges[k];
      const double w =
          dir == Direction::kForward
              ? assign::forward_variance_weight(coeff_sq_[k], in.width, range)
          : backward_coeff_sq_.empty()
              ? assign::backward_variance_weight(in.width, range)
              : assign::forward_variance_weight(backward_coeff_sq_[k], in.width, range);
      problem.messages.push_back({part.rank, r, w});
    }
  }
}

std::vector<AdaptivePolicy::WidthCounts> AdaptivePolicy::count_widths(
    const std::vector<uint8_t>& send, Direction dir, int layer) const {
  const std::vector<int64_t>& out = send_offsets(boundary_, dir);
  std::vector<WidthCounts> counts(boundary_.num_parts, WidthCounts{});
  for (int r = 0; r < boundary_.num_parts; ++r) {
    for (int64_t k = out[r]; k < out[r + 1]; ++k) {
      const int w = quant::message_width_index(send[k]);
      ADAQP_CHECK(w >= 0, fmt::format("layer {} {} message {}: width {}", layer,
                                      direction_name(dir), k, send[k]));
      ++counts[r][w];
    }
  }
  return counts;
}

std::vector<AdaptivePolicy::Solution> AdaptivePolicy::solve(
    const std::vector<assign::AssignProblem>& problems, const std::vector<Direction>& dirs,
    const std::vector<double>& full_s) {
  if (opt_.lambda <= 0 || opt_.lambda >= 1) {
    // Objective seconds reaches here only at lambda = 0 where full precision is slower.
    std::vector<Solution> solutions;
    for (const assign::AssignProblem& p : problems) {
      const int b = assign::endpoint_width(opt_.lambda, p.bits, p.row_width);
      solutions.push_back({std::vector<uint8_t>(p.messages.size(), static_cast<uint8_t>(b))});
    }
    return solutions;
  }
  if (opt_.solver == assign::Solver::kExact) {
    std::vector<Solution> solutions;
    for (size_t i = 0; i < problems.size(); ++i) {
      solutions.push_back(solve_exact(problems[i], full_s[i]));
    }
    return solutions;
  }
  return solve_fast(problems, dirs, full_s);
}

std::vector<AdaptivePolicy::Solution> AdaptivePolicy::solve_fast(
    const std::vector<assign::AssignProblem>& problems, const std::vector<Direction>& dirs,
    const std::vector<double>& full_s) {
  const int world = comm_.size();
  const size_t n = problems.size();
  constexpr size_t kStride = 2 + kCandidates;  // per problem: vmin, vmax, prefix variances
  if (solvers_.size() < n) solvers_.resize(n);
  std::vector<double> taus(kCandidates * n), local(kStride * n), all(kStride * n * world);
  for_each_problem(n, [&](size_t i) {
    const assign::AssignProblem& p = problems[i];
    solvers_[i].build(p, opt_.group_size);
    // The time bounds of all senders, from what every rank knows alike: their message counts and
    // the model (with every rank's codec time).
    // Full precision, where allowed (links of two classes), is taken where it fits in a budget
    // set by the codec widths (the whole exchange at full precision is weighed on its own).
    const auto [lo_bits, hi_bits] = assign::codec_width_range(p.bits);
    const std::vector<int64_t>& pairs = pair_messages_[static_cast<int>(dirs[i])];
    double tmin = 0, tmax = 0;
    if (world > 1) {
      tmin = slowest_channel(p.time, pairs, assign::row_bytes(p, lo_bits), nullptr);
      tmax = slowest_channel(p.time, pairs, assign::row_bytes(p, hi_bits), nullptr);
    }
    // Budgets below the hidden time save nothing (problem.h).
    tmin = std::max(tmin, p.hidden_s);
    tmax = std::max(tmax, p.hidden_s);
    const assign::ObjectiveBounds own = assign::objective_bounds(p);
    local[kStride * i] = own.vmin;
    local[kStride * i + 1] = own.vmax;
    for (int c = 0; c < kCandidates; ++c) {
      const double tau = c + 1 == kCandidates ? tmax : tmin + (tmax - tmin) * c / (kCandidates - 1);
      taus[i * kCandidates + c] = tau;
      local[kStride * i + 2 + c] = solvers_[i].prefix_variance(tau);
    }
  });
  solve_comm().allgather(local.data(), all.data(), local.size() * sizeof(double));
  // Every rank sums the same gathered values in rank order and takes the first best budget.
  std::vector<Solution> solutions(n);
  for_each_problem(n, [&](size_t i) {
    assign::ObjectiveBounds bounds;
    bounds.tmin = taus[i * kCandidates];
    bounds.tmax = taus[i * kCandidates + kCandidates - 1];
    std::vector<double> variance(kCandidates, 0.0);
    for (int r = 0; r < world; ++r) {
      const double* v = all.data() + r * local.size() + kStride * i;
      bounds.vmin += v[0];
      bounds.vmax += v[1];
      for (int c = 0; c < kCandidates; ++c) variance[c] += v[2 + c];
    }
    int best = 0;
    double best_obj = std::numeric_limits<double>::infinity();
    for (int c = 0; c < kCandidates; ++c) {
      const double tau = taus[i * kCandidates + c];
      const double obj = assign::normalized_objective(bounds, opt_.lambda, variance[c], tau);
      if (obj < best_obj) {
        best_obj = obj;
        best = c;
      }
    }
    const double tau = taus[i * kCandidates + best];
    if (opt_.objective == assign::Objective::kSeconds &&
        full_precision_wins(bounds, tau, variance[best], full_s[i])) {
      solutions[i].full_precision = true;
      return;
    }
    solutions[i].widths = solvers_[i].assign(tau);
  });
  return solutions;
}

AdaptivePolicy::Solution AdaptivePolicy::solve_exact(const assign::AssignProblem& problem,
                                                     double full_s) {
  const int world = comm_.size();
  const auto n = static_cast<int64_t>(problem.messages.size());
  std::vector<int64_t> counts(world);
  solve_comm().allgather(&n, counts.data(), sizeof(int64_t));
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  std::vector<double> weights(most, 0.0), all_weights(most * world);
  std::vector<int32_t> receivers(most, 0), all_receivers(most * world);
  for (int64_t j = 0; j < n; ++j) {
    weights[j] = problem.messages[j].weight;
    receivers[j] = problem.messages[j].receiver;
  }
  solve_comm().allgather(weights.data(), all_weights.data(), most * sizeof(double));
  solve_comm().allgather(receivers.data(), all_receivers.data(), most * sizeof(int32_t));
  int64_t total = 0, offset = 0;
  for (int r = 0; r < world; ++r) {
    if (r < comm_.rank()) offset += counts[r];
    total += counts[r];
  }
  // Every message's width, then one byte: 1 when full precision wins (objective seconds).
  std::vector<uint8_t> bits(static_cast<size_t>(total) + 1, 0);
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
    const assign::Assignment a = assign::solve_assignment(global, ao);
    std::copy(a.bits.begin(), a.bits.end(), bits.begin());
    bits.back() =
        opt_.objective == assign::Objective::kSeconds &&
        full_precision_wins(assign::objective_bounds(global),
                            std::max(a.eval.time, global.hidden_s), a.eval.variance, full_s);
  }
  solve_comm().broadcast(bits.data(), bits.size(), 0);
  Solution solution;
  solution.full_precision = bits.back() != 0;
  if (!solution.full_precision) {
    solution.widths.assign(bits.begin() + offset, bits.begin() + offset + n);
  }
  return solution;
}

void AdaptivePolicy::distribute(const std::vector<MessageBits*>& solved,
                                const std::vector<Direction>& dirs) {
  if (solved.empty()) return;  // every rank knows it: the decisions are common
  const Boundary& part = boundary_;
  const int world = part.num_parts;
  // Per peer, the widths of the solved exchanges in order, 2 bits each.
  std::vector<std::vector<uint8_t>> out(world), in(world);
  ExchangeBuffers b = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    if (r == part.rank) continue;
    int64_t sent = 0, received = 0;
    for (Direction dir : dirs) {
      sent += send_offsets(part, dir)[r + 1] - send_offsets(part, dir)[r];
      received += recv_offsets(part, dir)[r + 1] - recv_offsets(part, dir)[r];
    }
    out[r].assign(static_cast<size_t>((sent + 3) / 4), 0);
    in[r].resize(static_cast<size_t>((received + 3) / 4));
    uint8_t* packed = out[r].data();
    int64_t pos = 0;
    for (size_t i = 0; i < solved.size(); ++i) {
      const std::vector<int64_t>& so = send_offsets(part, dirs[i]);
      const std::vector<uint8_t>& send = solved[i]->send;
      for (int64_t k = so[r]; k < so[r + 1]; ++k, ++pos) {
        const auto code = static_cast<uint8_t>(quant::message_width_index(send[k]));
        packed[pos >> 2] |= static_cast<uint8_t>(code << (2 * (pos & 3)));
      }
    }
    b.send[r] = out[r].data();
    b.send_bytes[r] = out[r].size();
    b.recv[r] = in[r].data();
    b.recv_bytes[r] = in[r].size();
  }
  solve_comm().exchange(b, {kBitsTag})->wait();
  for (int r = 0; r < world; ++r) {
    if (r == part.rank) continue;
    const uint8_t* packed = in[r].data();
    int64_t pos = 0;
    for (size_t i = 0; i < solved.size(); ++i) {
      const std::vector<int64_t>& ro = recv_offsets(part, dirs[i]);
      std::vector<uint8_t>& recv = solved[i]->recv;
      for (int64_t k = ro[r]; k < ro[r + 1]; ++k, ++pos) {
        // Every 2-bit code names a message width (static_assert at the top).
        recv[k] =
            static_cast<uint8_t>(quant::message_width((packed[pos >> 2] >> (2 * (pos & 3))) & 3));
      }
    }
  }
}

const AssignStats* AdaptivePolicy::finish_epoch(const CommStats& comm,
                                                const MessageTraces& message_traces) {
  const double t0 = steady_now_s();
  const Boundary& part = boundary_;
  const int world = part.num_parts;
  const size_t exchanges = 2 * static_cast<size_t>(layers_);
  // Per exchange (direction, then layer), gathered from every rank: its modelled time, its start
  // on rank 0's clock (lowest() where it did not take part), its codec time (this epoch's if it
  // was quantized, else the last one), when it needed the exchange's data on rank 0's clock (its
  // start plus its hidden time; max() where it did not take part) and the sum of squared ranges
  // of its last trace.
  // Then two entries: this rank's training epoch (from the start of plan(): evaluation, metrics
  // and checkpoints between epochs are not the exchanges' doing; without plan() itself, whose
  // solves, one-off or settling with the drift, are not the schedule's cost) and whether it traced
  // an exchange.
  constexpr size_t kBlocks = 5;
  const size_t per_rank = kBlocks * exchanges + 2;
  std::vector<double> mine(per_rank, 0.0), all(per_rank * world);
  // stats_.assign_time_s is plan()'s time until this function adds its own.
  mine[per_rank - 2] =
      plan_start_s_ < 0 ? 0.0 : steady_now_s() - plan_start_s_ - stats_.assign_time_s;
  double* const own_codec = codec_s_.data() + part.rank * exchanges;
  std::vector<const ExchangeTrace*> traces(exchanges, nullptr);
  std::vector<int64_t> channel_bytes(time_.channels.size());
  stats_.same_host_bytes = stats_.same_host_full_precision_bytes = 0;
  stats_.hist_forward.assign(layers_, {});
  stats_.hist_backward.assign(layers_, {});
  for (Direction dir : kDirs) {
    const std::vector<MessageBits>& bits = plan_bits(current_, dir);
    const std::vector<ExchangeTrace>& done =
        dir == Direction::kForward ? comm.trace_forward : comm.trace_backward;
    auto& hist = dir == Direction::kForward ? stats_.hist_forward : stats_.hist_backward;
    for (int l = 0; l < layers_; ++l) {
      const size_t at = static_cast<int>(dir) * layers_ + l;
      mine[exchanges + at] = std::numeric_limits<double>::lowest();
      mine[2 * exchanges + at] = own_codec[at];
      mine[3 * exchanges + at] = std::numeric_limits<double>::max();
      const MessageTrace* trace = message_traces.find(l, dir);
      if (trace == nullptr) continue;  // not exchanged
      double range_sq = 0;
      for (float r : trace->ranges) range_sq += static_cast<double>(r) * r;
      mine[4 * exchanges + at] = range_sq;
      const bool full = bits[l].full_precision;
      if (static_cast<size_t>(l) < done.size() && done[l].completed_s > 0) {
        traces[at] = &done[l];
        mine[exchanges + at] = done[l].started_s + clock_offset_s_;
        if (measured_times_) {
          if (!full) mine[2 * exchanges + at] = done[l].quant_s;
          mine[3 * exchanges + at] = done[l].started_s + done[l].hidden_s + clock_offset_s_;
        }
      }
      // This rank's modelled time: its slowest channel under the epoch's widths.
      std::fill(channel_bytes.begin(), channel_bytes.end(), 0);
      const std::vector<int64_t>& out = send_offsets(part, dir);
      for (int r = 0; r < world; ++r) {
        if (r == part.rank) continue;
        const int32_t c = time_.channel(part.rank, r);
        const bool same_host =
            !time_.class_of_channel.empty() && time_.class_of_channel[c] == assign::kSameHost;
        WidthCounts n{};
        if (full) {
          n[quant::message_width_index(quant::kFullPrecisionBits)] = out[r + 1] - out[r];
        } else {
          n = send_counts_[at][r];
        }
        for (int w = 0; w < quant::kNumMessageWidths; ++w) {
          const int b = quant::message_width(w);
          const int64_t bytes = n[w] * quant::message_bytes(trace->width, b);
          hist[l][w] += n[w];
          channel_bytes[c] += bytes;
          if (!same_host) continue;
          stats_.same_host_bytes += bytes;
          if (b == quant::kFullPrecisionBits) stats_.same_host_full_precision_bytes += bytes;
        }
      }
      for (size_t c = 0; c < channel_bytes.size(); ++c) {
        if (channel_bytes[c] == 0) continue;
        mine[at] =
            std::max(mine[at], time_.channel_time(static_cast<int32_t>(c), channel_bytes[c]) +
                                   (full ? 0.0 : own_codec[at]));
      }
    }
  }
  const bool traced_here =
      std::any_of(traces.begin(), traces.end(), [](const ExchangeTrace* t) { return t; });
  mine[per_rank - 1] = traced_here ? 1.0 : 0.0;
  if (traced_here) ++traced_epochs_;
  if (!current_.overlap && !schedule_.needs_epoch_time()) {
    // Vanilla's schedule kept and its next trial further away than the epochs it reads: nothing
    // decided reads this epoch's gathered statistics, and the gather waits for every rank (on Cora
    // at W=2 0.22-0.26 ms of a 3.5 ms epoch). The model's prediction needs none: every exchange
    // at full precision, no codec (vanilla_comm_time's, by exchange; the last gathered epoch may
    // be a lost trial of the scheme's, quantized). Each exchange is timed from this rank's start.
    stats_.vanilla_schedule = true;
    schedule_.finish_epoch(
        {0.0, traced_here, traced_epochs_ >= 2, solved_once_, any_full_precision(current_)});
    std::vector<double> own(exchanges, 0.0), predicted(exchanges, 0.0);
    for (Direction dir : kDirs) {
      for (int l = 0; l < layers_; ++l) {
        const size_t at = static_cast<int>(dir) * layers_ + l;
        const MessageTrace* trace = message_traces.find(l, dir);
        if (trace == nullptr) continue;  // not exchanged
        predicted[at] = slowest_channel(time_, pair_messages_[static_cast<int>(dir)],
                                        quant::full_precision_bytes(trace->width), nullptr);
        if (traces[at] != nullptr) own[at] = traces[at]->completed_s - traces[at]->started_s;
      }
    }
    stats_.predicted_forward_s.assign(predicted.begin(), predicted.begin() + layers_);
    stats_.predicted_backward_s.assign(predicted.begin() + layers_, predicted.end());
    stats_.measured_forward_s.assign(own.begin(), own.begin() + layers_);
    stats_.measured_backward_s.assign(own.begin() + layers_, own.end());
    stats_.assign_time_s += steady_now_s() - t0;
    return &stats_;
  }
  comm_.allgather(mine.data(), all.data(), mine.size() * sizeof(double));
  std::vector<double> predicted(exchanges, 0.0), measured(exchanges, 0.0);
  for (size_t at = 0; at < exchanges; ++at) {
    double last_start = std::numeric_limits<double>::lowest();
    double first_need = std::numeric_limits<double>::max();
    for (int r = 0; r < world; ++r) {
      const double* v = all.data() + r * mine.size();
      predicted[at] = std::max(predicted[at], v[at]);
      last_start = std::max(last_start, v[exchanges + at]);
      codec_s_[r * exchanges + at] = v[2 * exchanges + at];
      first_need = std::min(first_need, v[3 * exchanges + at]);
      range_sq_[r * exchanges + at] = v[4 * exchanges + at];
    }
    // Hidden: from the moment the last rank started until the first needed the data (the model
    // times an exchange from its last start too).
    // (Not from an epoch without overlap: it hid nothing, by its schedule.)
    if (current_.overlap && first_need < std::numeric_limits<double>::max()) {
      hidden_s_[at] = std::max(0.0, first_need - last_start);
    }
    if (traces[at] != nullptr) {
      measured[at] = std::max(0.0, traces[at]->completed_s + clock_offset_s_ - last_start);
    }
  }
  double epoch_s = 0;
  bool traced_anywhere = false;
  for (int r = 0; r < world; ++r) {
    epoch_s = std::max(epoch_s, all[r * per_rank + per_rank - 2]);
    traced_anywhere = traced_anywhere || all[r * per_rank + per_rank - 1] != 0.0;
  }
  stats_.vanilla_schedule = !current_.overlap;
  const assign::MeasuredSchedule::Epoch timed{epoch_s, traced_anywhere, traced_epochs_ >= 2,
                                              solved_once_, any_full_precision(current_)};
  // A lost trial of Vanilla's schedule: the plans from before it come back. (A trial of the scheme
  // ran them: where it won they stay; where it lost, plan() puts every exchange at full precision
  // again.)
  if (schedule_.finish_epoch(timed) == assign::MeasuredSchedule::TrialEnd::kVanillaLost) {
    restore_saved_full();
  }
  stats_.full_precision_given_up = schedule_.full_precision_given_up();
  stats_.predicted_forward_s.assign(predicted.begin(), predicted.begin() + layers_);
  stats_.predicted_backward_s.assign(predicted.begin() + layers_, predicted.end());
  stats_.measured_forward_s.assign(measured.begin(), measured.begin() + layers_);
  stats_.measured_backward_s.assign(measured.begin() + layers_, measured.end());
  stats_.assign_time_s += steady_now_s() - t0;
  return &stats_;
}

}  // namespace adaqp
