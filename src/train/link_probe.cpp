#include "adaqp/train/link_probe.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

#include "adaqp/comm/clock_offset.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/model/torch_device.h"

namespace adaqp {

namespace {

constexpr int kProbeTag = 32762;
constexpr int kMinRepeats = 3;  // passes for a median per size (assign::fit_link)

// Rows this rank sends to / receives from each peer in one exchange pattern: forward (boundary rows
// out, halo rows in) or backward (the reverse).
struct Pattern {
  std::vector<int64_t> send_rows, recv_rows;
  int64_t total_send_rows = 0;
};

Pattern pattern(const Boundary& part, bool forward) {
  const std::vector<int64_t>& send = forward ? part.send_offsets : part.recv_offsets;
  const std::vector<int64_t>& recv = forward ? part.recv_offsets : part.send_offsets;
  Pattern p;
  for (int r = 0; r < part.num_parts; ++r) {
    p.send_rows.push_back(send[r + 1] - send[r]);
    p.recv_rows.push_back(recv[r + 1] - recv[r]);
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
  // Tight polling: every block's arrival is timed as it is seen. Past the deadline, the bounded
  // wait of the transport reports the stall (and a device transport aborts its communicator).
  const double deadline = t0 + comm.timeout();
  while (!work->test()) {
    if (steady_now_s() > deadline) {
      work->wait();
      break;
    }
    std::this_thread::yield();
  }
  const ExchangeTiming timing = work->timing();
  for (int r = 0; r < world; ++r) {
    if (timing.arrival_s[r] >= 0) arrival[r] = timing.arrival_s[r] - t0;
  }
  return arrival;
}

// The probe passes: sizes per row, alternating the forward and backward patterns.
struct ProbeRun {
  std::vector<std::vector<assign::TimingSample>> samples;  // per sender
  int64_t min_bytes = 0, max_bytes = 0;
};

// A sender's sample: from the moment the last rank started the probe (the start of the exchange as
// the runtime measures it, assign/adaptive_policy.h) until its block had arrived at every receiver.
void record(Communicator& comm, const std::vector<double>& arrival,
            const std::vector<int64_t>& sender_rows, int64_t row_bytes, ProbeRun& run) {
  const int world = comm.size();
  const size_t stride = static_cast<size_t>(world) + 1;
  std::vector<double> all(stride * world);
  comm.allgather(arrival.data(), all.data(), stride * sizeof(double));
  double last_start = all[world];
  for (int q = 1; q < world; ++q) last_start = std::max(last_start, all[q * stride + world]);
  for (int s = 0; s < world; ++s) {
    const int64_t bytes = sender_rows[s] * row_bytes;
    if (bytes == 0) continue;
    double done = last_start;
    for (int q = 0; q < world; ++q) {
      const double a = all[q * stride + s];
      if (a >= 0) done = std::max(done, all[q * stride + world] + a);
    }
    run.samples[s].push_back({bytes, done - last_start});
    run.min_bytes = run.min_bytes == 0 ? bytes : std::min(run.min_bytes, bytes);
    run.max_bytes = std::max(run.max_bytes, bytes);
  }
}

// Slopes that are not positive get the largest positive slope of the others.
std::vector<assign::LinkCost> plan_costs(const std::vector<assign::LinkFit>& fits, bool log) {
  double fallback = 0;
  for (const assign::LinkFit& f : fits) fallback = std::max(fallback, f.beta);
  if (fallback <= 0) fallback = 1e-9;
  std::vector<assign::LinkCost> costs;
  for (size_t s = 0; s < fits.size(); ++s) {
    assign::LinkCost c;
    c.alpha = std::max(fits[s].alpha, 0.0);
    c.beta = fits[s].beta;
    if (!(c.beta > 0)) {
      // A sender without samples sends nothing in any exchange: its cost never matters.
      if (log && fits[s].samples > 0)
        spdlog::warn(
            "link model: sender {} fitted slope {} s/byte over {} samples; planning with {}", s,
            fits[s].beta, fits[s].samples, fallback);
      c.beta = fallback;
    }
    costs.push_back(c);
  }
  return costs;
}

}  // namespace

LinkModel probe_link_model(Communicator& comm, const Boundary& part, const LinkProbeOptions& opt) {
  ADAQP_CHECK(opt.min_row_bytes >= 1 && opt.max_row_bytes > opt.min_row_bytes &&
                  opt.repeats >= kMinRepeats && opt.sizes >= 2,
              fmt::format("probe row sizes {}..{}, {} sizes, {} repeats", opt.min_row_bytes,
                          opt.max_row_bytes, opt.sizes, opt.repeats));
  const int world = comm.size();
  const double t_start = steady_now_s();
  const Pattern patterns[2] = {pattern(part, true), pattern(part, false)};
  std::vector<int64_t> sender_rows[2] = {std::vector<int64_t>(world), std::vector<int64_t>(world)};
  for (int k = 0; k < 2; ++k) {
    comm.allgather(&patterns[k].total_send_rows, sender_rows[k].data(), sizeof(int64_t));
  }
  ProbeBuffers buffers{opt.device, {}, {}};
  ProbeRun run;
  run.samples.resize(world);
  const double clock_offset = estimate_clock_offset(comm);

  // Warm-up (connections, buffers) at the smallest size and at 8 times it, which also prices a
  // pass: a probe's time is about linear in its size.
  const int64_t mid_row_bytes = std::min(opt.max_row_bytes, 8 * opt.min_row_bytes);
  double priced[2] = {0, 0};  // the slowest rank's time at the smallest and the middle size
  for (int k = 0; k < 2; ++k) {
    for (int64_t row_bytes : {opt.min_row_bytes, mid_row_bytes}) {
      const std::vector<double> a = probe_once(comm, patterns[k], row_bytes, clock_offset, buffers);
      double& t = priced[row_bytes == opt.min_row_bytes ? 0 : 1];
      for (int r = 0; r < world; ++r) t = std::max(t, a[r]);
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
  // The largest size shrinks (by 20% steps, to at least twice the smallest) until kMinRepeats
  // passes fit in the budget; then as many passes as fit, at most opt.repeats.
  int64_t max_row_bytes = opt.max_row_bytes;
  std::vector<int64_t> sizes = assign::probe_sizes(opt.min_row_bytes, max_row_bytes, opt.sizes);
  while (max_row_bytes > 2 * opt.min_row_bytes && kMinRepeats * pass_s(sizes) > opt.budget_s) {
    max_row_bytes = std::max(2 * opt.min_row_bytes, max_row_bytes * 4 / 5);
    sizes = assign::probe_sizes(opt.min_row_bytes, max_row_bytes, opt.sizes);
  }
  const double fit = opt.budget_s / std::max(pass_s(sizes), 1e-9);
  const int repeats =
      std::max(kMinRepeats, static_cast<int>(std::min<double>(opt.repeats, std::floor(fit))));
  // Sizes alternate between the forward and the backward pattern; a size keeps its pattern in
  // every pass, so that its repeats send the same bytes (one median per sender and size).
  // The pricing extrapolates from small probes, which a shaped link's burst lets through fast:
  // after the first kMinRepeats passes, the probe stops as soon as one more pass, timed like the
  // last, would end past the budget (every rank reads the same maximum, so all stop together).
  for (int pass = 0; pass < repeats; ++pass) {
    const double pass_start = steady_now_s();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const int k = static_cast<int>(i % 2);
      const std::vector<double> a = probe_once(comm, patterns[k], sizes[i], clock_offset, buffers);
      record(comm, a, sender_rows[k], sizes[i], run);
    }
    double spent[2] = {steady_now_s() - t_start, steady_now_s() - pass_start};
    comm.allreduce_max(spent, 2);
    if (pass + 1 >= kMinRepeats && spent[0] + spent[1] > opt.budget_s) break;
  }

  LinkModel model;
  for (int s = 0; s < world; ++s) {
    model.fits.push_back(run.samples[s].empty()
                             ? assign::LinkFit{}
                             : assign::fit_link(run.samples[s], fmt::format("sender {}", s)));
  }
  model.costs = plan_costs(model.fits, comm.rank() == 0);
  model.time = assign::per_sender_time_model(model.costs);
  model.min_bytes = run.min_bytes;
  model.max_bytes = run.max_bytes;
  double elapsed = steady_now_s() - t_start;
  comm.allreduce_max(&elapsed, 1);
  model.probe_time_s = elapsed;
  if (comm.rank() == 0) {
    spdlog::info(
        "link model (per sender, all links concurrent): {} probes of {}..{} bytes in {:.3f} s",
        run.samples[0].size(), run.min_bytes, run.max_bytes, elapsed);
    for (int s = 0; s < world; ++s) {
      const assign::LinkFit& f = model.fits[s];
      spdlog::info(
          "link model: sender {}: alpha {:.1f} us, beta {:.3f} ns/byte ({:.1f} MB/s), "
          "R^2 {:.4f}",
          s, f.alpha * 1e6, f.beta * 1e9, f.beta > 0 ? 1e-6 / f.beta : 0.0, f.r2);
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
