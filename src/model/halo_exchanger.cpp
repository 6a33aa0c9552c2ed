#include "adaqp/model/halo_exchanger.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/kernels/gather.h"
#include "adaqp/model/torch_device.h"
#include "adaqp/quant/block_codec.h"
#if ADAQP_WITH_CUDA
#include "adaqp/kernels/cuda_device.h"
#endif

namespace adaqp {

namespace {

// Peer blocks start at multiples of 16 bytes inside a buffer (the metadata floats stay aligned).
constexpr size_t kAlign = 16;

size_t align_up(size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

size_t float_bytes(int64_t rows, int64_t d) {
  return static_cast<size_t>(rows) * static_cast<size_t>(d) * sizeof(float);
}

int tag_of(const ExchangeId& id) {
  return 2 * id.layer + static_cast<int>(id.dir);
}

// The CPU codec sends a peer's block in pieces of consecutive rows, each a block of its own
// (quant/block_codec.h), so that the link carries one piece while the next is quantized and the
// receiver dequantizes pieces while later ones travel: up to kMaxPieces pieces of at least
// HaloExchangerOptions::piece_elements elements. Both ends cut alike from the row count and width.
constexpr int64_t kMaxPieces = 8;

struct Piece {
  int64_t first = 0;  // first row, within the peer's rows
  quant::BlockLayout layout;
  size_t begin = 0, end = 0;  // bytes, within the peer's block
};

// The pieces of a block of n rows of width d with widths bits[0 .. n).
std::vector<Piece> cut_block(const uint8_t* bits, int64_t n, int64_t d, int64_t piece_elements) {
  const int64_t count =
      n == 0 ? 1 : std::clamp<int64_t>(n * d / piece_elements, 1, std::min(n, kMaxPieces));
  std::vector<Piece> pieces(static_cast<size_t>(count));
  size_t bytes = 0;
  for (int64_t k = 0; k < count; ++k) {
    Piece& p = pieces[k];
    p.first = n * k / count;
    p.layout = quant::BlockLayout(bits + p.first, n * (k + 1) / count - p.first, d);
    p.begin = bytes;
    bytes += static_cast<size_t>(p.layout.bytes());
    p.end = bytes;
  }
  return pieces;
}

std::vector<size_t> piece_ends(const std::vector<Piece>& pieces) {
  std::vector<size_t> ends;
  for (const Piece& p : pieces) ends.push_back(p.end);
  return ends;
}

// A plan's widths must cover exactly the exchange's messages (codec tables index them).
void check_widths(const ExchangeId& id, const MessageBits& bits, int64_t sends, int64_t recvs) {
  ADAQP_CHECK(
      static_cast<int64_t>(bits.send.size()) == sends &&
          static_cast<int64_t>(bits.recv.size()) == recvs,
      fmt::format("layer {} {}: {} send and {} receive bit-widths for {} and {} messages", id.layer,
                  direction_name(id.dir), bits.send.size(), bits.recv.size(), sends, recvs));
}

}  // namespace

// One exchange's data as its hooks see it: rows to send and where received rows go.
struct HaloExchanger::Transfer {
  ExchangeId id;
  int64_t d = 0;
  const float* src = nullptr;  // rows to send
  bool gather = false;         // send row k is src[src_rows[k]] (else src[k])
  const int64_t* src_rows = nullptr;
  const int64_t* gids = nullptr;                       // global id of send row k
  float* dst = nullptr;                                // received rows, receive order
  const std::vector<int64_t>* send_offsets = nullptr;  // rows per peer, send order
  const std::vector<int64_t>* recv_offsets = nullptr;  // rows per peer, receive order
  Precision precision;

  bool quantized() const { return precision.bits != nullptr; }
  int64_t send_count(int r) const { return (*send_offsets)[r + 1] - (*send_offsets)[r]; }
  int64_t recv_count(int r) const { return (*recv_offsets)[r + 1] - (*recv_offsets)[r]; }
  quant::QuantKey key() const {
    quant::QuantKey k = precision.key;
    k.layer = static_cast<uint32_t>(id.layer);
    k.stream = id.dir == Direction::kForward ? RngStream::kQuantForward : RngStream::kQuantBackward;
    return k;
  }
};

// The widths of one layer and direction compiled into per-peer block layouts, kept until they
// change: the CPU codec's groups, or the device codec's per-row tables (quant/block_codec.h).
struct HaloExchanger::Codec {
  bool compiled = false;                      // CUDA: the tables below exist
  std::vector<uint8_t> send_bits, recv_bits;  // the widths compiled
  int64_t d = 0;
  std::vector<std::vector<Piece>> send_pieces, recv_pieces;               // CPU, per peer
  std::vector<quant::BlockCounts> send_counts, recv_counts;               // CUDA, per peer
  at::Tensor send_bits_dev, send_slot_dev, recv_bits_dev, recv_slot_dev;  // CUDA
  std::vector<size_t> send_bytes, recv_bytes;                             // per peer
  // CUDA: the traced ranges and the unquantizable-row word, on the device and their pinned host
  // copies (written by the exchange's packs on the communication stream).
  at::Tensor ranges_dev, ranges_host, status, status_host;
};

// An exchange between its start and its settlement.
struct HaloExchanger::Flight {
  ExchangeId id;
  std::unique_ptr<Work> work;
  bool quantized = false;  // the hooks' time is (de)quantization (else gathering rows)
  int64_t bytes_sent = 0;
  double entered_s = 0;  // start_* entered
  double finish_s = 0;   // finish_* entered
  // Quantized on CUDA: the staged ranges to copy to `ranges` (messages of them) and the status.
  float* ranges = nullptr;
  const float* staged_ranges = nullptr;
  int64_t messages = 0;
  const int64_t* status = nullptr;  // pinned host copy; -1 when every row was quantized
  quant::QuantKey key;
};

HaloExchanger::HaloExchanger(const Part& part, Communicator& comm, const HaloExchangerOptions& opt)
    : part_(part), comm_(comm), opt_(opt), exposed_(opt.device) {
  ADAQP_CHECK(comm.size() == part.num_parts && comm.rank() == part.rank,
              "part " + std::to_string(part.rank) + " of " + std::to_string(part.num_parts) +
                  " used on rank " + std::to_string(comm.rank()) + " of " +
                  std::to_string(comm.size()));
  ADAQP_CHECK(opt.piece_elements >= 1, "piece_elements " + std::to_string(opt.piece_elements));
  ADAQP_CHECK(!opt.device.is_cuda() || comm.device_memory(),
              "rows on " + opt.device.name() + " need a device transport (NcclCommunicator)");
  send_idx_ = to_device(part.send_idx, opt_.device);
  boundary_gid_ = to_device(send_gids(part, Direction::kForward), opt_.device);
  halo_gid_ = to_device(part.halo_gid, opt_.device);
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

uint8_t* HaloExchanger::reserve(at::Tensor& buffer, size_t bytes) {
  if (!buffer.defined() || static_cast<size_t>(buffer.numel()) < bytes) {
    quiesce();
    buffer = at::empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))},
                       torch_options(opt_.device, at::kByte));
  }
  return buffer.data_ptr<uint8_t>();
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

HaloExchanger::Codec& HaloExchanger::codec(const Transfer& t) {
  std::unique_ptr<Codec>& slot = codecs_[tag_of(t.id)];
  if (slot == nullptr) slot = std::make_unique<Codec>();
  Codec& c = *slot;
  const MessageBits& bits = *t.precision.bits;
  check_widths(t.id, bits, t.send_offsets->back(), t.recv_offsets->back());
  const int world = part_.num_parts;
  if (opt_.device.is_cuda()) {
    // The tables depend on the widths only (prepare() compiles them before the epoch); the
    // blocks' sizes on the row width too.
    if (!c.compiled || c.send_bits != bits.send || c.recv_bits != bits.recv) {
      compile_device(t, bits, c);
    }
    c.d = t.d;
    for (int r = 0; r < world; ++r) {
      c.send_bytes[r] = static_cast<size_t>(quant::block_bytes(c.send_counts[r], t.d));
      c.recv_bytes[r] = static_cast<size_t>(quant::block_bytes(c.recv_counts[r], t.d));
    }
    return c;
  }
  if (c.d == t.d && c.send_bits == bits.send && c.recv_bits == bits.recv) return c;
  c.d = t.d;
  c.send_bits = bits.send;
  c.recv_bits = bits.recv;
  c.send_bytes.assign(world, 0);
  c.recv_bytes.assign(world, 0);
  c.send_pieces.assign(world, {});
  c.recv_pieces.assign(world, {});
  for (int r = 0; r < world; ++r) {
    if (r == part_.rank) continue;
    c.send_pieces[r] = cut_block(bits.send.data() + (*t.send_offsets)[r], t.send_count(r), t.d,
                                 opt_.piece_elements);
    c.recv_pieces[r] = cut_block(bits.recv.data() + (*t.recv_offsets)[r], t.recv_count(r), t.d,
                                 opt_.piece_elements);
    c.send_bytes[r] = c.send_pieces[r].back().end;
    c.recv_bytes[r] = c.recv_pieces[r].back().end;
  }
  return c;
}

void HaloExchanger::compile_device(const Transfer& t, const MessageBits& bits, Codec& c) {
  quiesce();  // the old tables may still be read by an exchange on the device
  const int world = part_.num_parts;
  c.send_bits = bits.send;
  c.recv_bits = bits.recv;
  c.send_bytes.assign(world, 0);
  c.recv_bytes.assign(world, 0);
  std::vector<int32_t> send_slot(bits.send.size()), recv_slot(bits.recv.size());
  c.send_counts.assign(world, quant::BlockCounts());
  c.recv_counts.assign(world, quant::BlockCounts());
  for (int r = 0; r < world; ++r) {
    const int64_t s0 = (*t.send_offsets)[r], r0 = (*t.recv_offsets)[r];
    quant::block_slots(bits.send.data() + s0, t.send_count(r), send_slot.data() + s0,
                       &c.send_counts[r]);
    quant::block_slots(bits.recv.data() + r0, t.recv_count(r), recv_slot.data() + r0,
                       &c.recv_counts[r]);
  }
  c.compiled = true;
  c.send_bits_dev = to_device(bits.send, opt_.device);
  c.recv_bits_dev = to_device(bits.recv, opt_.device);
  c.send_slot_dev = to_device(send_slot, opt_.device);
  c.recv_slot_dev = to_device(recv_slot, opt_.device);
  if (!c.ranges_dev.defined()) {
    const int64_t n = std::max<int64_t>(t.send_offsets->back(), 1);
    const at::TensorOptions pinned = at::TensorOptions().pinned_memory(true);
    c.ranges_dev = at::empty({n}, torch_options(opt_.device, at::kFloat));
    c.ranges_host = at::empty({n}, pinned.dtype(at::kFloat));
    c.status = at::empty({1}, torch_options(opt_.device, at::kLong));
    c.status_host = at::empty({1}, pinned.dtype(at::kLong));
  }
}

void HaloExchanger::prepare(const QuantPlan& plan) {
  if (!opt_.device.is_cuda()) return;  // the CPU codec is compiled at the exchange
  for (int dir = 0; dir < 2; ++dir) {
    const std::vector<MessageBits>& by_layer = dir == 0 ? plan.forward : plan.backward;
    for (size_t l = 0; l < by_layer.size(); ++l) {
      Transfer t;
      t.id = ExchangeId{static_cast<int>(l), static_cast<Direction>(dir)};
      t.send_offsets = dir == 0 ? &part_.send_offsets : &part_.halo_offsets;
      t.recv_offsets = dir == 0 ? &part_.halo_offsets : &part_.send_offsets;
      t.precision.bits = &by_layer[l];
      check_widths(t.id, by_layer[l], t.send_offsets->back(), t.recv_offsets->back());
      std::unique_ptr<Codec>& slot = codecs_[tag_of(t.id)];
      if (slot == nullptr) slot = std::make_unique<Codec>();
      if (!slot->compiled || slot->send_bits != by_layer[l].send ||
          slot->recv_bits != by_layer[l].recv) {
        compile_device(t, by_layer[l], *slot);
      }
    }
  }
}

ExchangeHooks HaloExchanger::hooks(const Transfer& t, Codec* c, uint8_t* send, uint8_t* recv,
                                   const std::vector<size_t>& send_at,
                                   const std::vector<size_t>& recv_at, float* ranges,
                                   unsigned long long* status) {
  ExchangeHooks h;
  const bool cuda = opt_.device.is_cuda();
  const quant::QuantKey key = t.key();
  if (!t.quantized()) {
    if (!t.gather) return h;  // sent as they are
    float* rows = boundary_rows_.data_ptr<float>();
    h.pack = [t, rows, cuda](int r, int /*piece: one per block*/, void* stream) {
      const int64_t begin = (*t.send_offsets)[r];
      if (cuda) {
#if ADAQP_WITH_CUDA
        kernels::gather_rows_cuda(t.src, t.d, t.src_rows + begin, t.send_count(r),
                                  rows + begin * t.d, stream);
#endif
      } else {
        (void)stream;
        kernels::gather_rows_cpu(t.src, t.d, t.src_rows + begin, t.send_count(r),
                                 rows + begin * t.d);
      }
    };
    return h;
  }
  const float* ranges_host = c->ranges_host.defined() ? c->ranges_host.data_ptr<float>() : nullptr;
  h.pack = [t, c, send, send_at, key, ranges, ranges_host, status, cuda](int r, int piece,
                                                                         void* stream) {
    // CUDA: one piece per block (the device codec places each row itself).
    const int64_t begin = (*t.send_offsets)[r] + (cuda ? 0 : c->send_pieces[r][piece].first);
    const float* src = t.gather ? t.src : t.src + begin * t.d;
    const int64_t* rows = t.gather ? t.src_rows + begin : nullptr;
    if (cuda) {
#if ADAQP_WITH_CUDA
      float* r_dev = ranges != nullptr ? c->ranges_dev.data_ptr<float>() + begin : nullptr;
      quant::encode_block_cuda(c->send_bits_dev.data_ptr<uint8_t>() + begin,
                               c->send_slot_dev.data_ptr<int32_t>() + begin, c->send_counts[r], src,
                               t.d, rows, t.gids + begin, key, send + send_at[r], r_dev, status,
                               stream);
      // The packs run in order on the stream: the last copy holds every peer's rows' verdict.
      kernels::cuda_copy_async(c->status_host.data_ptr<int64_t>(), status, sizeof(int64_t), stream);
      if (r_dev != nullptr) {
        kernels::cuda_copy_async(const_cast<float*>(ranges_host) + begin, r_dev,
                                 sizeof(float) * static_cast<size_t>(t.send_count(r)), stream);
      }
#endif
    } else {
      (void)stream;
      (void)status;
      (void)ranges_host;
      const Piece& p = c->send_pieces[r][piece];
      quant::encode_block(p.layout, src, t.d, rows, t.gids + begin, key,
                          send + send_at[r] + p.begin,
                          ranges != nullptr ? ranges + begin : nullptr);
    }
  };
  h.unpack = [t, c, recv, recv_at, cuda](int r, int piece, void* stream) {
    const int64_t begin = (*t.recv_offsets)[r] + (cuda ? 0 : c->recv_pieces[r][piece].first);
    float* dst = t.dst + begin * t.d;
    if (cuda) {
#if ADAQP_WITH_CUDA
      quant::decode_block_cuda(c->recv_bits_dev.data_ptr<uint8_t>() + begin,
                               c->recv_slot_dev.data_ptr<int32_t>() + begin, c->recv_counts[r],
                               recv + recv_at[r], t.d, dst, stream);
#endif
    } else {
      (void)stream;
      const Piece& p = c->recv_pieces[r][piece];
      quant::decode_block(p.layout, recv + recv_at[r] + p.begin, t.d, dst);
    }
  };
  return h;
}

void HaloExchanger::start(const Transfer& t) {
  ADAQP_CHECK(flight_ == nullptr, "an exchange is already in flight");
  // Per-tag state (staged ranges, status word) is reused once the tag's last exchange is settled.
  for (const std::unique_ptr<Flight>& f : finished_) {
    ADAQP_CHECK(tag_of(f->id) != tag_of(t.id) || !t.quantized(),
                fmt::format("layer {} {} exchanged twice before settle()", t.id.layer,
                            direction_name(t.id.dir)));
  }
  const double t0 = steady_now_s();
  if (!opt_.device.is_cuda()) exposed_.start();
  const int world = part_.num_parts;
  auto flight = std::make_unique<Flight>();
  flight->id = t.id;
  flight->quantized = t.quantized();
  flight->entered_s = t0;
  ExchangeBuffers b = ExchangeBuffers::none(world);
  ExchangeHooks h;
  if (t.quantized()) {
    Codec& c = codec(t);
    std::vector<size_t> send_at(world + 1, 0), recv_at(world + 1, 0);
    for (int r = 0; r < world; ++r) {
      send_at[r + 1] = send_at[r] + align_up(r == part_.rank ? 0 : c.send_bytes[r]);
      recv_at[r + 1] = recv_at[r] + align_up(r == part_.rank ? 0 : c.recv_bytes[r]);
    }
    uint8_t* send = reserve(send_bytes_, send_at[world]);
    uint8_t* recv = reserve(recv_bytes_, recv_at[world]);
    for (int r = 0; r < world; ++r) {
      if (r == part_.rank) continue;
      b.send[r] = send + send_at[r];
      b.send_bytes[r] = c.send_bytes[r];
      b.recv[r] = recv + recv_at[r];
      b.recv_bytes[r] = c.recv_bytes[r];
      if (!opt_.device.is_cuda()) {
        if (b.send_bytes[r] > 0) b.send_pieces[r] = piece_ends(c.send_pieces[r]);
        if (b.recv_bytes[r] > 0) b.recv_pieces[r] = piece_ends(c.recv_pieces[r]);
      }
      flight->bytes_sent += static_cast<int64_t>(c.send_bytes[r]);
    }
    unsigned long long* status = nullptr;
#if ADAQP_WITH_CUDA
    if (opt_.device.is_cuda()) {
      status = reinterpret_cast<unsigned long long*>(c.status.data_ptr<int64_t>());
      // Reset on the compute stream, which the exchange's packs wait for; the host copy here (the
      // last exchange of this tag was settled: no copy into it is pending).
      kernels::cuda_memset_async(status, 0xFF, sizeof(*status), nullptr);
      *c.status_host.data_ptr<int64_t>() = -1;
      flight->status = c.status_host.data_ptr<int64_t>();
      flight->key = t.key();
      if (t.precision.ranges != nullptr) {
        flight->ranges = t.precision.ranges;
        flight->staged_ranges = c.ranges_host.data_ptr<float>();
        flight->messages = t.send_offsets->back();
      }
    }
#endif
    h = hooks(t, &c, send, recv, send_at, recv_at, t.precision.ranges, status);
  } else {
    float* rows = t.gather ? boundary_rows(t.send_offsets->back(), t.d) : nullptr;
    for (int r = 0; r < world; ++r) {
      if (r == part_.rank) continue;
      const int64_t s0 = (*t.send_offsets)[r], r0 = (*t.recv_offsets)[r];
      b.send[r] = t.gather ? rows + s0 * t.d : t.src + s0 * t.d;
      b.send_bytes[r] = float_bytes(t.send_count(r), t.d);
      b.recv[r] = t.dst + r0 * t.d;
      b.recv_bytes[r] = float_bytes(t.recv_count(r), t.d);
      flight->bytes_sent += static_cast<int64_t>(b.send_bytes[r]);
    }
    h = hooks(t, nullptr, nullptr, nullptr, {}, {}, nullptr, nullptr);
  }
  ExchangeOptions options;
  options.tag = tag_of(t.id);
  options.hooks = std::move(h);
  options.background = opt_.overlap;
  options.producer_stream = nullptr;  // the compute stream
  flight->work = comm_.exchange(b, options);
  ++stats_.exchanges;
  if (!opt_.overlap) {
    if (opt_.device.is_cuda()) exposed_.start(nullptr);
    flight->work->wait_on_stream(nullptr);
    if (opt_.device.is_cuda()) exposed_.stop(nullptr);
    if (t.id.dir == Direction::kForward) boundary_rows_ = at::Tensor();  // sent
  }
  flight_ = std::move(flight);
  if (!opt_.device.is_cuda()) exposed_.stop();
}

void HaloExchanger::finish() {
  ADAQP_CHECK(flight_ != nullptr, "no exchange in flight");
  std::unique_ptr<Flight> f = std::move(flight_);
  f->finish_s = steady_now_s();
  exposed_.start(nullptr);
  f->work->wait_on_stream(nullptr);
  exposed_.stop(nullptr);
  if (f->id.dir == Direction::kForward) boundary_rows_ = at::Tensor();  // sent
  finished_.push_back(std::move(f));
}

void HaloExchanger::settle() {
  std::vector<std::unique_ptr<Flight>> done = std::move(finished_);
  finished_.clear();
  for (std::unique_ptr<Flight>& f : done) {
    f->work->wait();
    const ExchangeTiming timing = f->work->timing();
    trace_ = ExchangeTrace{};
    trace_.started_s = opt_.device.is_cuda() ? timing.started_s : f->entered_s;
    trace_.completed_s = timing.completed_s;
    trace_.finish_s = f->finish_s;
    trace_.quant_s = f->quantized ? timing.codec_s : 0.0;
    // On CUDA the host's timestamps do not say when the device worked: no hidden time there.
    if (opt_.overlap && !opt_.device.is_cuda()) {
      trace_.hidden_s = std::max(0.0, f->finish_s - f->entered_s);
    }
    if (f->status != nullptr) {
      const int64_t bad = *f->status;
      if (bad != -1) {
        throw quant::NonFiniteError(f->key, bad,
                                    "it holds a NaN or infinite value, or its value range "
                                    "overflows float32");
      }
    }
    if (f->staged_ranges != nullptr) {
      std::copy(f->staged_ranges, f->staged_ranges + f->messages, f->ranges);
    }
    const double comm_s = trace_.completed_s - trace_.started_s;
    const bool fwd = f->id.dir == Direction::kForward;
    const auto layer = static_cast<size_t>(f->id.layer);
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
  Transfer t;
  t.id = id;
  t.d = d;
  t.src = h;
  t.gather = true;
  t.src_rows = send_idx_.data_ptr<int64_t>();
  t.gids = boundary_gid_.data_ptr<int64_t>();
  t.dst = halo_out;
  t.send_offsets = &part_.send_offsets;
  t.recv_offsets = &part_.halo_offsets;
  t.precision = precision;
  start(t);
}

void HaloExchanger::finish_forward() {
  finish();
}

void HaloExchanger::start_backward(const float* halo_grad, int64_t d, const ExchangeId& id,
                                   const Precision& precision) {
  float* rows = boundary_rows(static_cast<int64_t>(part_.send_idx.size()), d);
  width_ = d;
  Transfer t;
  t.id = id;
  t.d = d;
  t.src = halo_grad;
  t.gids = halo_gid_.data_ptr<int64_t>();
  t.dst = rows;
  t.send_offsets = &part_.halo_offsets;
  t.recv_offsets = &part_.send_offsets;
  t.precision = precision;
  start(t);
}

void HaloExchanger::finish_backward() {
  finish();
}

void HaloExchanger::add_received_gradients(float* dh) {
  const int64_t d = width_;
  const float* rows = boundary_rows_.data_ptr<float>();
  const int64_t* idx = send_idx_.data_ptr<int64_t>();
  // Peers one after another: a boundary row sent to several peers gets several contributions, but
  // within one peer's block every row is distinct.
  for (int r = 0; r < part_.num_parts; ++r) {
    const int64_t begin = part_.send_offsets[r], n = part_.send_count_to(r);
    if (opt_.device.is_cuda()) {
#if ADAQP_WITH_CUDA
      kernels::scatter_add_rows_cuda(rows + begin * d, d, idx + begin, n, dh, nullptr);
#endif
    } else {
      kernels::scatter_add_rows_cpu(rows + begin * d, d, idx + begin, n, dh);
    }
  }
  boundary_rows_ = at::Tensor();  // added (CUDA: the additions are enqueued before any reuse)
}

}  // namespace adaqp
