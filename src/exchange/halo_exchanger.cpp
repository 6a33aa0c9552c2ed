#include "adaqp/exchange/halo_exchanger.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/kernels/gather.h"
#include "adaqp/tensor/torch_device.h"

namespace adaqp {

// An exchange between its start and its settlement.
struct HaloExchanger::Flight {
  Transfer transfer;
  MessageCodec* codec = nullptr;
  std::unique_ptr<Work> work;
  int64_t bytes_sent = 0;
  double entered_s = 0;  // start_* entered
  double finish_s = 0;   // finish_* entered
  bool overlap = false;  // the schedule it started under
};

HaloExchanger::HaloExchanger(const Boundary& boundary, const std::vector<int64_t>* send_idx,
                             Communicator& comm, const HaloExchangerOptions& opt)
    : boundary_(boundary), comm_(comm), opt_(opt), overlap_(opt.overlap), exposed_(opt.device) {
  ADAQP_CHECK(comm.size() == boundary.num_parts && comm.rank() == boundary.rank,
              "part " + std::to_string(boundary.rank) + " of " +
                  std::to_string(boundary.num_parts) + " used on rank " +
                  std::to_string(comm.rank()) + " of " + std::to_string(comm.size()));
  ADAQP_CHECK_GE(opt.piece_elements, 1, "piece_elements");
  ADAQP_CHECK(!opt.device.is_cuda() || comm.device_memory(),
              "rows on " + opt.device.name() + " need a device transport (NcclCommunicator)");
  device_transport_ = comm.device_memory();
  ADAQP_CHECK(send_idx == nullptr || static_cast<int64_t>(send_idx->size()) == boundary.sends(),
              fmt::format("send list of {} rows for {} sent rows",
                          send_idx != nullptr ? send_idx->size() : 0, boundary.sends()));
  CodecContext ctx;
  ctx.rank = boundary.rank;
  ctx.num_parts = boundary.num_parts;
  ctx.device = opt_.device;
  ctx.piece_elements = opt_.piece_elements;
  ctx.quiesce = [this] { quiesce(); };
  full_ = make_full_precision_codec(ctx);
  quantized_ = make_quantized_codec(ctx);
  has_send_list_ = send_idx != nullptr;
  if (has_send_list_) send_idx_ = to_device(*send_idx, opt_.device);
  // The boundary outlives the exchanger: its keys themselves on the CPU, copies on a GPU.
  send_keys_ = where_computed(boundary.send_keys.data(), boundary.sends(), opt_.device);
  recv_keys_ = where_computed(boundary.recv_keys.data(), boundary.recvs(), opt_.device);
}

HaloExchanger::~HaloExchanger() {
  try {
    quiesce();
  } catch (const std::exception&) {
    // The Works' destructors wait (bounded) and log.
  }
}

bool HaloExchanger::progress_thread() const {
  return opt_.overlap && comm_.allows_progress_thread();
}

void HaloExchanger::set_overlap(bool on) {
  // Never throws: QuantPlanScope's destructor calls it, also while an exchange that failed midway
  // is in flight (each flight keeps the schedule it started under).
  overlap_ = opt_.overlap && on;
}

float* HaloExchanger::boundary_rows(int64_t rows, int64_t d) {
  if (boundary_rows_.defined()) quiesce();  // an exchange that failed midway may still use them
  boundary_rows_ =
      at::empty({std::max<int64_t>(rows * d, 1)}, torch_options(opt_.device, at::kFloat));
  return boundary_rows_.data_ptr<float>();
}

void HaloExchanger::quiesce() {
  if (flight_ != nullptr) flight_->work->wait();
  for (const std::unique_ptr<Flight>& f : finished_) f->work->wait();
}

Transfer HaloExchanger::transfer_of(const ExchangeId& id, int64_t d,
                                    const Precision& precision) const {
  Transfer t;
  t.id = id;
  t.d = d;
  t.send_offsets = &send_offsets(boundary_, id.dir);
  t.recv_offsets = &recv_offsets(boundary_, id.dir);
  t.precision = precision;
  return t;
}

void HaloExchanger::prepare(const QuantPlan& plan) {
  const double t0 = steady_now_s();
  for (int dir = 0; dir < 2; ++dir) {
    const std::vector<MessageBits>& by_layer = dir == 0 ? plan.forward : plan.backward;
    for (size_t l = 0; l < by_layer.size(); ++l) {
      if (by_layer[l].full_precision) continue;
      Precision p;
      p.bits = &by_layer[l];
      quantized_->prepare(
          transfer_of(ExchangeId{static_cast<int>(l), static_cast<Direction>(dir)}, 0, p));
    }
  }
  stats_.codec_setup_time_s += steady_now_s() - t0;
}

void HaloExchanger::start(Transfer t) {
  ADAQP_CHECK(flight_ == nullptr, "an exchange is already in flight");
  // A codec's per-tag state (staged ranges, status word) is reused once the tag's last exchange
  // is settled.
  for (const std::unique_ptr<Flight>& f : finished_) {
    ADAQP_CHECK(f->transfer.id.tag() != t.id.tag() || !t.quantized(),
                fmt::format("layer {} {} exchanged twice before settle()", t.id.layer,
                            direction_name(t.id.dir)));
  }
  const double t0 = steady_now_s();
  if (!device_transport_) exposed_.start();
  auto flight = std::make_unique<Flight>();
  flight->entered_s = t0;
  flight->overlap = overlap_;
  if (!t.quantized() && t.gather) t.staging = boundary_rows(t.sends(), t.d);
  flight->transfer = t;
  flight->codec = t.quantized() ? quantized_.get() : full_.get();
  ExchangeBuffers b = ExchangeBuffers::none(boundary_.num_parts);
  ExchangeOptions options;
  const double bind_s = steady_now_s();
  options.hooks = flight->codec->bind(t, b);
  stats_.codec_setup_time_s += steady_now_s() - bind_s;
  for (size_t bytes : b.send_bytes) flight->bytes_sent += static_cast<int64_t>(bytes);
  options.tag = t.id.tag();
  options.background = overlap_;
  options.producer_stream = nullptr;  // the compute stream
  flight->work = comm_.exchange(b, options);
  ++stats_.exchanges;
  if (!overlap_) {
    if (device_transport_) exposed_.start(nullptr);
    flight->work->wait_on_stream(nullptr);
    if (device_transport_) exposed_.stop(nullptr);
    if (t.id.dir == Direction::kForward) boundary_rows_ = at::Tensor();  // sent
  }
  flight_ = std::move(flight);
  if (!device_transport_) exposed_.stop();
}

void HaloExchanger::finish() {
  ADAQP_CHECK(flight_ != nullptr, "no exchange in flight");
  std::unique_ptr<Flight> f = std::move(flight_);
  f->finish_s = steady_now_s();
  exposed_.start(nullptr);
  f->work->wait_on_stream(nullptr);
  exposed_.stop(nullptr);
  if (f->transfer.id.dir == Direction::kForward) boundary_rows_ = at::Tensor();  // sent
  finished_.push_back(std::move(f));
}

void HaloExchanger::settle() {
  std::vector<std::unique_ptr<Flight>> done = std::move(finished_);
  finished_.clear();
  for (std::unique_ptr<Flight>& f : done) {
    f->work->wait();
    const ExchangeTiming timing = f->work->timing();
    trace_ = ExchangeTrace{};
    trace_.started_s = device_transport_ ? timing.started_s : f->entered_s;
    trace_.completed_s = timing.completed_s;
    trace_.finish_s = f->finish_s;
    trace_.quant_s = f->transfer.quantized() ? timing.codec_s : 0.0;
    // On a device the host's timestamps do not say when the device worked: there the hidden time
    // runs until the compute stream reached finish_* (the transport's needed_s).
    if (f->overlap && !device_transport_) {
      trace_.hidden_s = std::max(0.0, f->finish_s - f->entered_s);
    } else if (f->overlap && timing.needed_s >= 0) {
      trace_.hidden_s = std::max(0.0, timing.needed_s - timing.started_s);
    }
    f->codec->settle(f->transfer);
    const double comm_s = trace_.completed_s - trace_.started_s;
    const bool fwd = f->transfer.id.dir == Direction::kForward;
    const auto layer = static_cast<size_t>(f->transfer.id.layer);
    stats_.comm_time_s += comm_s;
    stats_.quant_time_s += trace_.quant_s;
    stats_.bytes_sent += f->bytes_sent;
    std::vector<int64_t>& bytes = fwd ? stats_.bytes_forward : stats_.bytes_backward;
    std::vector<double>& times = fwd ? stats_.comm_forward_s : stats_.comm_backward_s;
    std::vector<ExchangeTrace>& traces = fwd ? stats_.trace_forward : stats_.trace_backward;
    if (bytes.size() <= layer) bytes.resize(layer + 1, 0);
    if (times.size() <= layer) times.resize(layer + 1, 0);
    if (traces.size() <= layer) traces.resize(layer + 1);
    bytes[layer] += f->bytes_sent;
    times[layer] += comm_s;
    traces[layer] = trace_;
  }
}

const CommStats& HaloExchanger::stats() {
  settle();
  stats_.exposed_time_s = exposed_.seconds();
  return stats_;
}

void HaloExchanger::reset_stats() {
  settle();
  stats_ = CommStats{};
  exposed_.reset();
}

const ExchangeTrace& HaloExchanger::last_trace() {
  settle();
  return trace_;
}

void HaloExchanger::start_forward(const float* h, int64_t d, float* halo_out, const ExchangeId& id,
                                  const Precision& precision) {
  ADAQP_CHECK(id.dir == Direction::kForward, "start_forward of a backward exchange");
  Transfer t = transfer_of(id, d, precision);
  t.src = h;
  t.gather = has_send_list_;
  t.src_rows = t.gather ? send_idx_.data_ptr<int64_t>() : nullptr;
  t.gids = send_keys_.data_ptr<int64_t>();
  t.dst = halo_out;
  start(t);
}

void HaloExchanger::finish_forward() {
  finish();
}

void HaloExchanger::start_backward(const float* halo_grad, int64_t d, const ExchangeId& id,
                                   const Precision& precision) {
  ADAQP_CHECK(id.dir == Direction::kBackward, "start_backward of a forward exchange");
  Transfer t = transfer_of(id, d, precision);
  t.src = halo_grad;
  t.gids = recv_keys_.data_ptr<int64_t>();
  t.dst = boundary_rows(boundary_.sends(), d);
  width_ = d;
  start(t);
}

void HaloExchanger::finish_backward() {
  finish();
}

void HaloExchanger::add_received_gradients(float* dh) {
  ADAQP_CHECK(has_send_list_, "add_received_gradients without a send list");
  const int64_t d = width_;
  const float* rows = boundary_rows_.data_ptr<float>();
  const int64_t* idx = send_idx_.data_ptr<int64_t>();
  // Peers one after another: a boundary row sent to several peers gets several contributions, but
  // within one peer's block every row is distinct.
  for (int r = 0; r < boundary_.num_parts; ++r) {
    const int64_t begin = boundary_.send_offsets[r], n = boundary_.send_count_to(r);
    kernels::scatter_add_rows(opt_.device, rows + begin * d, d, idx + begin, n, dh, nullptr);
  }
  boundary_rows_ = at::Tensor();  // added (CUDA: the additions are enqueued before any reuse)
}

at::Tensor HaloExchanger::received_gradients() {
  ADAQP_CHECK(!has_send_list_, "received_gradients with a send list");
  const at::Tensor rows = std::exchange(boundary_rows_, at::Tensor());
  return rows.narrow(0, 0, boundary_.sends() * width_).view({boundary_.sends(), width_});
}

}  // namespace adaqp
