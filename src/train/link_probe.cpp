#include "adaqp/train/link_probe.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numeric>

#include "adaqp/comm/clock_offset.h"
#include "adaqp/comm/host_of.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

namespace {

constexpr int kProbeTag = 32762;
// How long a probe exchange is polled without pause (probe_once).
constexpr double kTightPollS = 1.0;
constexpr int kMinRepeats = 3;  // passes for a median per size (assign::fit_link)

// "sender 3", or with link classes "sender 3 to other hosts".
std::string channel_name(int channel, int classes) {
  if (classes == 1) return fmt::format("sender {}", channel);
  return fmt::format("sender {} to {}", channel / classes,
                     channel % classes == assign::kSameHost ? "its host" : "other hosts");
}

// Rows this rank sends to / receives from each peer in one exchange pattern: forward (boundary rows
// out, halo rows in) or backward (the reverse).
struct Pattern {
  std::vector<int64_t> send_rows, recv_rows;
  int64_t total_send_rows = 0;
};

// Only the peers r with keep[r] take part (empty: all).
Pattern pattern(const Boundary& part, bool forward, const std::vector<bool>& keep) {
  const std::vector<int64_t>& send = forward ? part.send_offsets : part.recv_offsets;
  const std::vector<int64_t>& recv = forward ? part.recv_offsets : part.send_offsets;
  Pattern p;
  for (int r = 0; r < part.num_parts; ++r) {
    const bool in = keep.empty() || keep[r];
    p.send_rows.push_back(in ? send[r + 1] - send[r] : 0);
    p.recv_rows.push_back(in ? recv[r + 1] - recv[r] : 0);
    p.total_send_rows += p.send_rows.back();
  }
  return p;
}

// The probe's byte buffers where the job's exchanges live (device memory for a device transport),
// grown as needed.
struct ProbeBuffers {
  Device device;
  at::Tensor send, recv;

  uint8_t* reserve(at::Tensor& buffer, size_t bytes) const {
    if (!buffer.defined() || static_cast<size_t>(buffer.numel()) < bytes)
      buffer = at::zeros({static_cast<int64_t>(std::max<size_t>(bytes, 1))},
                         torch_options(device, at::kByte));
    return buffer.data_ptr<uint8_t>();
  }
};

// One probe exchange with every peer at once, as the halo exchanger runs it (one grouped exchange:
// all receives posted, then the sends to rank+1, rank+2, ...), started after a barrier. Returns
// world + 1 values: per peer, the seconds from this rank's start until its block had arrived here
// (-1 for a peer that sent nothing), then this rank's start on rank 0's clock (`clock_offset`
// added).
std::vector<double> probe_once(Communicator& comm, const Pattern& p, int64_t row_bytes,
                               double clock_offset, ProbeBuffers& buffers) {
  const int world = comm.size(), rank = comm.rank();
  std::vector<size_t> send_off(world + 1, 0), recv_off(world + 1, 0);
  for (int r = 0; r < world; ++r) {
    const bool peer = r != rank;
    send_off[r + 1] = send_off[r] + (peer ? static_cast<size_t>(p.send_rows[r] * row_bytes) : 0);
    recv_off[r + 1] = recv_off[r] + (peer ? static_cast<size_t>(p.recv_rows[r] * row_bytes) : 0);
  }
  uint8_t* send = buffers.reserve(buffers.send, send_off[world]);
  uint8_t* recv = buffers.reserve(buffers.recv, recv_off[world]);
  ExchangeBuffers b = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    b.send[r] = send + send_off[r];
    b.send_bytes[r] = send_off[r + 1] - send_off[r];
    b.recv[r] = recv + recv_off[r];
    b.recv_bytes[r] = recv_off[r + 1] - recv_off[r];
  }
  std::vector<double> arrival(world + 1, -1.0);
  comm.barrier();
  const double t0 = steady_now_s();
  arrival[world] = t0 + clock_offset;
  const std::unique_ptr<Work> work = comm.exchange(b, {kProbeTag});
  // Tight polling: every block's arrival is timed as it is seen, for as long as that matters (a
  // block later than a second is timed to 0.02% by wait()'s looks). Then the transport's own wait,
  // bounded by the communicator's timeout, reports a stall (a device transport aborts its
  // communicator): the whole wait stays within 1.1 times the timeout (before 2026-12-08, twice).
  if (!work->wait_for(std::min(kTightPollS, 0.1 * comm.timeout()))) work->wait();
  const ExchangeTiming timing = work->timing();
  for (int r = 0; r < world; ++r) {
    if (timing.arrival_s[r] >= 0) arrival[r] = timing.arrival_s[r] - t0;
  }
  return arrival;
}

// The probe passes: sizes per row, alternating the forward and backward patterns.
struct ProbeRun {
  std::vector<std::vector<assign::TimingSample>> samples;  // per group of senders
  int64_t min_bytes = 0, max_bytes = 0;
};

// A group's sample (group_of[s]: sender s's group, < world): from the moment the last rank started
// the probe (the start of the exchange as the runtime measures it, assign/adaptive_policy.h) until
// every block of its senders had arrived at every receiver, against the bytes they sent.
void record(Communicator& comm, const std::vector<double>& arrival,
            const std::vector<int64_t>& sender_rows, int64_t row_bytes,
            const std::vector<int>& group_of, ProbeRun& run) {
  const int world = comm.size();
  const size_t stride = static_cast<size_t>(world) + 1;
  std::vector<double> all(stride * world);
  comm.allgather(arrival.data(), all.data(), stride * sizeof(double));
  double last_start = all[world];
  for (int q = 1; q < world; ++q) last_start = std::max(last_start, all[q * stride + world]);
  std::vector<int64_t> bytes(world, 0);
  std::vector<double> done(world, last_start);
  for (int s = 0; s < world; ++s) {
    const int g = group_of[s];
    bytes[g] += sender_rows[s] * row_bytes;
    for (int q = 0; sender_rows[s] > 0 && q < world; ++q) {
      const double a = all[q * stride + s];
      if (a >= 0) done[g] = std::max(done[g], all[q * stride + world] + a);
    }
  }
  for (int g = 0; g < world; ++g) {
    if (bytes[g] == 0) continue;
    run.samples[g].push_back({bytes[g], done[g] - last_start});
    run.min_bytes = run.min_bytes == 0 ? bytes[g] : std::min(run.min_bytes, bytes[g]);
    run.max_bytes = std::max(run.max_bytes, bytes[g]);
  }
}

// Seconds left until deadline_s on the rank with the least left (ranks' clocks differ; every rank
// reads the same value, so all take the same decisions).
double seconds_left(Communicator& comm, double deadline_s) {
  double late = steady_now_s() - deadline_s;
  comm.allreduce_max(&late, 1);
  return -late;
}

// The probe passes over one pair of patterns (forward, backward) until deadline_s (this rank's
// steady clock).
ProbeRun probe_patterns(Communicator& comm, const Pattern (&patterns)[2],
                        const std::vector<int>& group_of, const LinkProbeOptions& opt,
                        double deadline_s, double clock_offset, ProbeBuffers& buffers) {
  const int world = comm.size();
  std::vector<int64_t> sender_rows[2] = {std::vector<int64_t>(world), std::vector<int64_t>(world)};
  for (int k = 0; k < 2; ++k) {
    comm.allgather(&patterns[k].total_send_rows, sender_rows[k].data(), sizeof(int64_t));
  }
  ProbeRun run;
  run.samples.resize(world);

  // Warm-up (connections, buffers) at the smallest size and at 8 times it, which also prices a
  // probe: the slowest rank's wall time for it, barrier and gathering of the arrivals included
  // (about linear in its size; the exchange alone underprices a pass by a third on a shaped link).
  const int64_t mid_row_bytes = std::min(opt.max_row_bytes, 8 * opt.min_row_bytes);
  double priced[2] = {0, 0};  // at the smallest and at the middle size
  ProbeRun warm_up;
  warm_up.samples.resize(world);
  for (int k = 0; k < 2; ++k) {
    for (int64_t row_bytes : {opt.min_row_bytes, mid_row_bytes}) {
      const double t0 = steady_now_s();
      const std::vector<double> a = probe_once(comm, patterns[k], row_bytes, clock_offset, buffers);
      record(comm, a, sender_rows[k], row_bytes, group_of, warm_up);
      double& t = priced[row_bytes == opt.min_row_bytes ? 0 : 1];
      t = std::max(t, steady_now_s() - t0);
    }
  }
  comm.allreduce_max(priced, 2);
  const double per_row_byte =
      std::max(priced[1] - priced[0], 0.0) / static_cast<double>(mid_row_bytes - opt.min_row_bytes);
  auto pass_s = [&](const std::vector<int64_t>& sizes) {
    double t = 0;
    for (int64_t size : sizes) {
      t += priced[0] + per_row_byte * static_cast<double>(size - opt.min_row_bytes);
    }
    return t;
  };
  // The largest size shrinks (by 20% steps, to at least twice the smallest) until `passes` more
  // passes fit in `left` seconds, a pass over today's sizes costing `pass_price`.
  int64_t max_row_bytes = opt.max_row_bytes;
  std::vector<int64_t> sizes = assign::probe_sizes(opt.min_row_bytes, max_row_bytes, opt.sizes);
  auto shrink_to_fit = [&](int passes, double pass_price, double left) {
    const double per_priced = pass_price / std::max(pass_s(sizes), 1e-9);
    while (max_row_bytes > 2 * opt.min_row_bytes && passes * per_priced * pass_s(sizes) > left) {
      max_row_bytes = std::max(2 * opt.min_row_bytes, max_row_bytes * 4 / 5);
      sizes = assign::probe_sizes(opt.min_row_bytes, max_row_bytes, opt.sizes);
    }
  };
  double left = seconds_left(comm, deadline_s);
  shrink_to_fit(kMinRepeats, pass_s(sizes), left);
  const int repeats =
      std::max(kMinRepeats, static_cast<int>(std::min<double>(
                                opt.repeats, std::floor(left / std::max(pass_s(sizes), 1e-9)))));
  // Sizes alternate between the forward and the backward pattern; a size keeps its pattern in
  // every pass, so that its repeats send the same bytes (one median per sender and size). Each
  // pass is then priced like the last: before kMinRepeats passes, the sizes shrink again if the
  // passes still due would end past the deadline (the larger sizes keep the samples they have);
  // after them, the probe stops as soon as one more pass would (all ranks read the same time left,
  // so all stop together).
  for (int pass = 0; pass < repeats; ++pass) {
    const double pass_start = steady_now_s();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int k = static_cast<int>(i % 2);
      const std::vector<double> a = probe_once(comm, patterns[k], sizes[i], clock_offset, buffers);
      record(comm, a, sender_rows[k], sizes[i], group_of, run);
    }
    double last = steady_now_s() - pass_start;
    comm.allreduce_max(&last, 1);
    left = seconds_left(comm, deadline_s);
    if (pass + 1 < kMinRepeats) {
      shrink_to_fit(kMinRepeats - pass - 1, last, left);
    } else if (last > left) {
      break;
    }
  }
  return run;
}

}  // namespace

LinkModel probe_link_model(Communicator& comm, const Boundary& part, const LinkProbeOptions& opt) {
  ADAQP_CHECK(opt.min_row_bytes >= 1 && opt.max_row_bytes > opt.min_row_bytes &&
                  opt.repeats >= kMinRepeats && opt.sizes >= 2,
              fmt::format("probe row sizes {}..{}, {} sizes, {} repeats", opt.min_row_bytes,
                          opt.max_row_bytes, opt.sizes, opt.repeats));
  const int world = comm.size();
  const double t_start = steady_now_s();
  const double deadline_s = t_start + opt.budget_s;
  const std::vector<int> host_of = host_of_ranks(comm);
  // Rows every rank sends to peers of each class; a class that carries nothing is not probed.
  std::array<int64_t, assign::kLinkClasses> mine{}, used{};
  for (int r = 0; r < world; ++r) {
    if (r == part.rank) continue;
    const int k = assign::link_class(host_of, part.rank, r);
    mine[k] += part.send_offsets[r + 1] - part.send_offsets[r] + part.recv_offsets[r + 1] -
               part.recv_offsets[r];
  }
  std::vector<int64_t> all(assign::kLinkClasses * static_cast<size_t>(world));
  comm.allgather(mine.data(), all.data(), sizeof(mine));
  for (size_t i = 0; i < all.size(); ++i) used[i % assign::kLinkClasses] += all[i];
  const int classes = used[assign::kSameHost] > 0 && used[assign::kOtherHost] > 0 ? 2 : 1;
  ProbeBuffers buffers{opt.device, {}, {}};
  const double clock_offset = estimate_clock_offset(comm);

  LinkModel model;
  model.classes = classes;
  model.fits.assign(static_cast<size_t>(classes) * world, assign::LinkFit{});
  int64_t probes = 0;
  std::vector<int> identity(world);
  std::iota(identity.begin(), identity.end(), 0);
  for (int k = 0; k < classes; ++k) {
    // One class: every peer, as in training. Two: each class's peers alone, an equal share of the
    // time left each.
    std::vector<bool> keep;
    for (int r = 0; classes > 1 && r < world; ++r) {
      keep.push_back(r != part.rank && assign::link_class(host_of, part.rank, r) == k);
    }
    const Pattern patterns[2] = {pattern(part, true, keep), pattern(part, false, keep)};
    // The ranks of a host share its network link: their traffic to other hosts is fitted as the
    // host's (all their bytes, until the last of them arrived), and each rank plans with the host's
    // line at the host's slope times its ranks that send there (a fair share of the link).
    const bool by_host = classes > 1 && k == assign::kOtherHost;
    const double class_deadline_s =
        steady_now_s() + std::max(deadline_s - steady_now_s(), 0.0) / (classes - k);
    const ProbeRun run = probe_patterns(comm, patterns, by_host ? host_of : identity, opt,
                                        class_deadline_s, clock_offset, buffers);
    std::vector<int> sharing(world, 0);
    for (int s = 0; s < world; ++s) {
      if (all[assign::kLinkClasses * s + k] > 0) ++sharing[by_host ? host_of[s] : s];
    }
    for (int s = 0; s < world; ++s) {
      const int g = by_host ? host_of[s] : s;
      if (run.samples[g].empty()) continue;
      const int c = classes * s + k;
      model.fits[c] = assign::fit_link(run.samples[g], channel_name(c, classes));
      model.fits[c].beta *= std::max(sharing[g], 1);
    }
    for (const std::vector<assign::TimingSample>& g : run.samples) {
      probes = std::max(probes, static_cast<int64_t>(g.size()));
    }
    model.min_bytes =
        model.min_bytes == 0 ? run.min_bytes : std::min(model.min_bytes, run.min_bytes);
    model.max_bytes = std::max(model.max_bytes, run.max_bytes);
  }
  model.costs = assign::plan_costs(model.fits, classes);
  for (size_t c = 0; comm.rank() == 0 && c < model.fits.size(); ++c) {
    // A channel without samples carries nothing in any exchange: its cost never matters.
    if (model.costs[c].beta != model.fits[c].beta && model.fits[c].samples > 0) {
      // Expected on a link faster than the probe's sizes resolve (shared memory): said, not
      // warned of.
      spdlog::info(
          "link model: {} fitted slope {} s/byte over {} samples (its times do not grow with the "
          "size: noise, or a link faster than the probe resolves); planning with {}",
          channel_name(static_cast<int>(c), classes), model.fits[c].beta, model.fits[c].samples,
          model.costs[c].beta);
    }
  }
  model.time = classes == 1 ? assign::per_sender_time_model(model.costs)
                            : assign::per_sender_class_time_model(host_of, model.costs);
  double elapsed = steady_now_s() - t_start;
  comm.allreduce_max(&elapsed, 1);
  model.probe_time_s = elapsed;
  if (comm.rank() == 0 && probes == 0) {
    spdlog::info("link model: no link carries halo messages here; nothing probed");
  } else if (comm.rank() == 0) {
    spdlog::info("link model ({}, all links concurrent): {} probes of {}..{} bytes in {:.3f} s",
                 classes == 1 ? "per sender" : "per sender, same host and other hosts", probes,
                 model.min_bytes, model.max_bytes, elapsed);
    for (size_t c = 0; c < model.fits.size(); ++c) {
      const assign::LinkFit& f = model.fits[c];
      if (f.samples == 0) continue;
      // A loose fit (times that vary more than the sizes explain: a busy or shared machine) is
      // said, not left to be read as a measurement of the link.
      spdlog::info(
          "link model: {}: alpha {:.1f} us, beta {:.3f} ns/byte ({:.1f} MB/s), R^2 {:.4f}{}",
          channel_name(static_cast<int>(c), classes), f.alpha * 1e6, f.beta * 1e9,
          f.beta > 0 ? 1e-6 / f.beta : 0.0, f.r2,
          f.r2 < 0.5 ? " (a loose fit: the probe's times vary more than its sizes explain)" : "");
    }
  }
  return model;
}

LinkModel fixed_link_model(const std::vector<assign::LinkCost>& costs) {
  LinkModel model;
  for (const assign::LinkCost& c : costs) {
    assign::LinkFit f;
    f.alpha = c.alpha;
    f.beta = c.beta;
    f.r2 = 1;
    model.fits.push_back(f);
  }
  model.costs = costs;
  model.time = assign::per_sender_time_model(costs);
  return model;
}

}  // namespace adaqp
