#include "adaqp/model/halo_exchanger.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "adaqp/common/backoff.h"
#include "adaqp/common/error.h"
#include "adaqp/kernels/gather.h"

namespace adaqp {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

size_t float_bytes(int64_t rows, int64_t d) {
  return static_cast<size_t>(rows) * static_cast<size_t>(d) * sizeof(float);
}

// Buffers of a transfer with one peer only.
ExchangeBuffers no_transfers(int world) {
  ExchangeBuffers b;
  b.send.assign(world, nullptr);
  b.send_bytes.assign(world, 0);
  b.recv.assign(world, nullptr);
  b.recv_bytes.assign(world, 0);
  return b;
}

}  // namespace

// One exchange in flight: what to pack for each peer, where each peer's rows land, and the
// transfers still pending. Its steps run on the caller or on the progress thread, never both.
struct HaloExchanger::Flight {
  const Part* part = nullptr;
  Communicator* comm = nullptr;
  ExchangeId id;
  int64_t d = 0;
  const float* src = nullptr;         // rows to send
  const int64_t* src_rows = nullptr;  // send row k is src[src_rows[k]]; null: src[k]
  float* send_rows = nullptr;         // full precision with src_rows: gathered rows, send order
  const int64_t* gids = nullptr;      // global id of send row k
  float* dst = nullptr;               // received rows, receive order
  const std::vector<int64_t>* send_offsets = nullptr;  // rows per peer, send order
  const std::vector<int64_t>* recv_offsets = nullptr;  // rows per peer, receive order
  Precision precision;
  std::vector<std::vector<uint8_t>>* send_bytes = nullptr;  // quantized blocks, per peer
  std::vector<std::vector<uint8_t>>* recv_bytes = nullptr;
  std::vector<BlockLayout> recv_layout;
  std::vector<std::unique_ptr<Work>> sends, recvs;
  bool all_sent = false;  // every peer's block has been posted
  int64_t bytes_sent = 0;
  double quant_s = 0;
  double completed_s = 0;

  bool quantized() const { return precision.bits != nullptr; }
  int world() const { return part->num_parts; }
  int64_t send_count(int r) const { return (*send_offsets)[r + 1] - (*send_offsets)[r]; }
  int64_t recv_count(int r) const { return (*recv_offsets)[r + 1] - (*recv_offsets)[r]; }
  int tag() const { return 2 * id.layer + static_cast<int>(id.dir); }
  quant::QuantKey key() const {
    quant::QuantKey k = precision.key;
    k.layer = static_cast<uint32_t>(id.layer);
    k.stream = id.dir == Direction::kForward ? RngStream::kQuantForward : RngStream::kQuantBackward;
    return k;
  }

  // Posts every receive.
  void begin() {
    sends.resize(world());
    recvs.resize(world());
    recv_layout.resize(world());
    for (int r = 0; r < world(); ++r) {
      if (r == part->rank || recv_count(r) == 0) continue;
      ExchangeBuffers b = no_transfers(world());
      float* rows = dst + (*recv_offsets)[r] * d;
      if (quantized()) {
        recv_layout[r] =
            BlockLayout(precision.bits->recv.data() + (*recv_offsets)[r], recv_count(r), d);
        (*recv_bytes)[r].resize(static_cast<size_t>(recv_layout[r].bytes()));
        b.recv[r] = (*recv_bytes)[r].data();
        b.recv_bytes[r] = (*recv_bytes)[r].size();
      } else {
        b.recv[r] = rows;
        b.recv_bytes[r] = float_bytes(recv_count(r), d);
      }
      recvs[r] = comm->exchange(b, tag());
    }
  }

  // Packs peer r's block and starts sending it.
  void send_to(int r) {
    if (send_count(r) == 0) return;
    const int64_t begin = (*send_offsets)[r], n = send_count(r);
    ExchangeBuffers b = no_transfers(world());
    if (quantized()) {
      const double t0 = now_s();
      const BlockLayout layout(precision.bits->send.data() + begin, n, d);
      std::vector<uint8_t>& out = (*send_bytes)[r];
      out.resize(static_cast<size_t>(layout.bytes()));
      float* ranges = precision.ranges != nullptr ? precision.ranges + begin : nullptr;
      if (src_rows != nullptr) {
        encode_block(layout, src, d, src_rows + begin, gids + begin, key(), out.data(), ranges);
      } else {
        encode_block(layout, src + begin * d, d, nullptr, gids + begin, key(), out.data(), ranges);
      }
      quant_s += now_s() - t0;
      b.send[r] = out.data();
      b.send_bytes[r] = out.size();
    } else if (src_rows != nullptr) {
      kernels::gather_rows_cpu(src, d, src_rows + begin, n, send_rows + begin * d);
      b.send[r] = send_rows + begin * d;
      b.send_bytes[r] = float_bytes(n, d);
    } else {
      b.send[r] = src + begin * d;
      b.send_bytes[r] = float_bytes(n, d);
    }
    bytes_sent += static_cast<int64_t>(b.send_bytes[r]);
    sends[r] = comm->exchange(b, tag());
  }

  // Packs and sends every peer's block (peers rank+1, rank+2, ...), testing the transfers already
  // posted between two blocks.
  void send_all() {
    for (int k = 1; k < world(); ++k) {
      send_to((part->rank + k) % world());
      poll();
    }
    all_sent = true;
  }

  // One progress step: tests every pending transfer and unpacks the blocks that have arrived.
  // True once everything has completed.
  bool poll() {
    bool done = all_sent;
    for (int r = 0; r < world(); ++r) {
      if (recvs[r] != nullptr) {
        if (recvs[r]->test()) {
          recvs[r].reset();
          unpack(r);
        } else {
          done = false;
        }
      }
      if (sends[r] != nullptr) {
        if (sends[r]->test()) {
          sends[r].reset();
        } else {
          done = false;
        }
      }
    }
    if (done && completed_s == 0) completed_s = now_s();
    return done;
  }

  void unpack(int r) {
    if (!quantized()) return;
    const double t0 = now_s();
    decode_block(recv_layout[r], (*recv_bytes)[r].data(), d, dst + (*recv_offsets)[r] * d);
    quant_s += now_s() - t0;
  }

  // Polls until everything has completed; CommError after the communicator's timeout.
  void drive() {
    const double timeout_s = comm->timeout();
    const double deadline = now_s() + timeout_s;
    // Short sleeps: keep a fast link busy while leaving the cores to the computation.
    Backoff backoff(32, std::chrono::microseconds(5), std::chrono::microseconds(200));
    while (!poll()) {
      if (now_s() >= deadline) {
        std::vector<int> recv_from, send_to;
        for (int r = 0; r < world(); ++r) {
          if (recvs[r] != nullptr) recv_from.push_back(r);
          if (sends[r] != nullptr) send_to.push_back(r);
        }
        throw CommError(fmt::format(
            "halo exchange (layer {} {}) timed out after {} s on rank {}; still waiting for: "
            "recv from [{}], send to [{}]",
            id.layer, direction_name(id.dir), timeout_s, part->rank, fmt::join(recv_from, ", "),
            fmt::join(send_to, ", ")));
      }
      backoff.pause();
    }
  }
};

HaloExchanger::HaloExchanger(const Part& part, Communicator& comm, const HaloExchangerOptions& opt)
    : part_(part),
      comm_(comm),
      opt_(opt),
      boundary_gid_(send_gids(part, Direction::kForward)),
      send_bytes_(part.num_parts),
      recv_bytes_(part.num_parts) {
  ADAQP_CHECK(comm.size() == part.num_parts && comm.rank() == part.rank,
              "part " + std::to_string(part.rank) + " of " + std::to_string(part.num_parts) +
                  " used on rank " + std::to_string(comm.rank()) + " of " +
                  std::to_string(comm.size()));
  if (opt_.overlap && comm.allows_progress_thread()) thread_ = std::make_unique<ProgressThread>();
}

HaloExchanger::~HaloExchanger() = default;

void HaloExchanger::start(std::unique_ptr<Flight> flight) {
  ADAQP_CHECK(flight_ == nullptr, "an exchange is already in flight");
  const double t0 = now_s();
  trace_ = ExchangeTrace{};
  trace_.started_s = t0;
  Flight& f = *flight;
  f.part = &part_;
  f.comm = &comm_;
  f.send_bytes = &send_bytes_;
  f.recv_bytes = &recv_bytes_;
  if (f.quantized()) {
    const MessageBits& bits = *f.precision.bits;
    ADAQP_CHECK(static_cast<int64_t>(bits.send.size()) == f.send_offsets->back() &&
                    static_cast<int64_t>(bits.recv.size()) == f.recv_offsets->back(),
                fmt::format("layer {} {}: {} send and {} receive bit-widths for {} and {} messages",
                            f.id.layer, direction_name(f.id.dir), bits.send.size(),
                            bits.recv.size(), f.send_offsets->back(), f.recv_offsets->back()));
  }
  width_ = f.d;
  flight_ = std::move(flight);
  ++stats_.exchanges;
  if (thread_ != nullptr) {
    thread_->submit([&f] {
      // Packing here must not compete with the caller's compute threads.
      omp_set_num_threads(1);
      f.begin();
      f.send_all();
      f.drive();
    });
  } else {
    f.begin();
    f.send_all();
    if (!opt_.overlap) f.drive();
  }
  stats_.exposed_time_s += now_s() - t0;
}

void HaloExchanger::finish() {
  ADAQP_CHECK(flight_ != nullptr, "no exchange in flight");
  const double t0 = now_s();
  trace_.finish_s = t0;
  const std::unique_ptr<Flight> f = std::move(flight_);
  if (thread_ != nullptr) {
    thread_->wait();
  } else {
    f->drive();
  }
  trace_.completed_s = f->completed_s;
  trace_.quant_s = f->quant_s;
  const double comm_s = f->completed_s - trace_.started_s;
  stats_.comm_time_s += comm_s;
  stats_.quant_time_s += f->quant_s;
  stats_.bytes_sent += f->bytes_sent;
  std::vector<int64_t>& by_layer =
      f->id.dir == Direction::kForward ? stats_.bytes_forward : stats_.bytes_backward;
  if (by_layer.size() <= static_cast<size_t>(f->id.layer)) by_layer.resize(f->id.layer + 1, 0);
  by_layer[f->id.layer] += f->bytes_sent;
  std::vector<double>& time_by_layer =
      f->id.dir == Direction::kForward ? stats_.comm_forward_s : stats_.comm_backward_s;
  if (time_by_layer.size() <= static_cast<size_t>(f->id.layer)) {
    time_by_layer.resize(f->id.layer + 1, 0);
  }
  time_by_layer[f->id.layer] += comm_s;
  std::vector<ExchangeTrace>& traces =
      f->id.dir == Direction::kForward ? stats_.trace_forward : stats_.trace_backward;
  if (traces.size() <= static_cast<size_t>(f->id.layer)) traces.resize(f->id.layer + 1);
  traces[f->id.layer] = trace_;
  stats_.exposed_time_s += now_s() - t0;
}

void HaloExchanger::start_forward(const float* h, int64_t d, float* halo_out, const ExchangeId& id,
                                  const Precision& precision) {
  auto f = std::make_unique<Flight>();
  f->id = id;
  f->d = d;
  f->src = h;
  f->src_rows = part_.send_idx.data();
  f->gids = boundary_gid_.data();
  f->dst = halo_out;
  f->send_offsets = &part_.send_offsets;
  f->recv_offsets = &part_.halo_offsets;
  f->precision = precision;
  if (precision.bits == nullptr) {
    send_rows_.resize(part_.send_idx.size() * static_cast<size_t>(d));
    f->send_rows = send_rows_.data();
  }
  start(std::move(f));
}

void HaloExchanger::finish_forward() {
  finish();
}

void HaloExchanger::start_backward(const float* halo_grad, int64_t d, const ExchangeId& id,
                                   const Precision& precision) {
  recv_rows_.resize(part_.send_idx.size() * static_cast<size_t>(d));
  auto f = std::make_unique<Flight>();
  f->id = id;
  f->d = d;
  f->src = halo_grad;
  f->gids = part_.halo_gid.data();
  f->dst = recv_rows_.data();
  f->send_offsets = &part_.halo_offsets;
  f->recv_offsets = &part_.send_offsets;
  f->precision = precision;
  start(std::move(f));
}

void HaloExchanger::finish_backward() {
  finish();
}

void HaloExchanger::add_received_gradients(float* dh) const {
  const int64_t d = width_;
  // Peers one after another: a boundary row sent to several peers gets several contributions,
  // but within one peer's block every row is distinct, so the rows of a block can run in parallel.
  for (int r = 0; r < part_.num_parts; ++r) {
    const int64_t begin = part_.send_offsets[r], end = part_.send_offsets[r + 1];
#pragma omp parallel for schedule(static) if ((end - begin) * d > 65536)
    for (int64_t k = begin; k < end; ++k) {
      float* __restrict row = dh + part_.send_idx[k] * d;
      const float* __restrict src = recv_rows_.data() + k * d;
#pragma omp simd
      for (int64_t c = 0; c < d; ++c) row[c] += src[c];
    }
  }
}

}  // namespace adaqp
