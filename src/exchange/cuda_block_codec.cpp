#include <ATen/ATen.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "adaqp/exchange/message_codec.h"
#include "adaqp/kernels/cuda_device.h"
#include "adaqp/quant/block_codec.h"
#include "adaqp/tensor/torch_device.h"
#include "byte_blocks.h"
#include "codecs.h"

namespace adaqp::exchange_detail {
namespace {

// The widths of one layer and direction compiled into per-row device tables (each row places
// itself in its block: quant/block_codec.h), kept until the widths change; and the exchange's
// traced ranges and unquantizable-row word, on the device and in pinned host copies (written by
// the packs on the communication stream, read by settle()).
struct Tables {
  bool compiled = false;
  std::vector<uint8_t> send_bits, recv_bits;
  std::vector<quant::BlockCounts> send_counts, recv_counts;  // per peer
  at::Tensor send_bits_dev, send_slot_dev, recv_bits_dev, recv_slot_dev;
  // Pinned sources of the tables' asynchronous uploads, and their completion: the host writes
  // them again only once the last upload has run (the random scheme recompiles every epoch).
  at::Tensor send_bits_pinned, send_slot_pinned, recv_bits_pinned, recv_slot_pinned;
  std::unique_ptr<kernels::CudaEvent> uploaded;
  at::Tensor ranges_dev, ranges_host, status, status_host;
  PeerLayout layout;
};

// `host` on `device`, copied without blocking the host from the pinned buffer `pinned` (grown as
// needed), on the compute stream, where the kernels that read it run.
template <typename T>
at::Tensor upload(const std::vector<T>& host, at::ScalarType type, at::Tensor& pinned,
                  const Device& device) {
  const auto n = static_cast<int64_t>(host.size());
  if (!pinned.defined() || pinned.numel() < n) {
    pinned =
        at::empty({std::max<int64_t>(n, 1)}, at::TensorOptions().dtype(type).pinned_memory(true));
  }
  std::copy(host.begin(), host.end(), static_cast<T*>(pinned.data_ptr()));
  return pinned.narrow(0, 0, n).to(torch_device(device), /*non_blocking=*/true);
}

class CudaBlockCodec final : public MessageCodec {
 public:
  explicit CudaBlockCodec(const CodecContext& ctx)
      : ctx_(ctx), send_(ctx.device, ctx.quiesce), recv_(ctx.device, ctx.quiesce) {}

  const PeerLayout& layout(const Transfer& t) override {
    Tables& c = tables(t);
    const int world = ctx_.num_parts;
    c.layout.send_bytes.assign(world, 0);
    c.layout.recv_bytes.assign(world, 0);
    for (int r = 0; r < world; ++r) {
      if (r == ctx_.rank) continue;
      c.layout.send_bytes[r] = static_cast<size_t>(quant::block_bytes(c.send_counts[r], t.d));
      c.layout.recv_bytes[r] = static_cast<size_t>(quant::block_bytes(c.recv_counts[r], t.d));
    }
    return c.layout;
  }

  void prepare(const Transfer& t) override { tables(t); }

  ExchangeHooks bind(const Transfer& t, ExchangeBuffers& b) override {
    const PeerLayout& l = layout(t);
    Tables* c = &by_tag_[t.id.tag()];
    const std::vector<uint8_t*> send = send_.place(l.send_bytes);
    const std::vector<uint8_t*> recv = recv_.place(l.recv_bytes);
    for (int r = 0; r < ctx_.num_parts; ++r) {
      if (r == ctx_.rank) continue;
      b.send[r] = send[r];
      b.send_bytes[r] = l.send_bytes[r];
      b.recv[r] = recv[r];
      b.recv_bytes[r] = l.recv_bytes[r];
    }
    auto* status = reinterpret_cast<unsigned long long*>(c->status.data_ptr<int64_t>());
    // Reset on the compute stream, which the exchange's packs wait for; the host copy here (the
    // last exchange of this tag was settled: no copy into it is pending).
    kernels::cuda_memset_async(status, 0xFF, sizeof(*status), nullptr);
    *c->status_host.data_ptr<int64_t>() = -1;
    const quant::QuantKey key = t.key(ctx_.rank);
    const bool trace = t.precision.ranges != nullptr;
    ExchangeHooks h;
    h.pack = [t, c, send, key, status, trace](int r, int /*piece: one per block*/, void* stream) {
      const int64_t begin = (*t.send_offsets)[r];
      const float* src = t.gather ? t.src : t.src + begin * t.d;
      const int64_t* rows = t.gather ? t.src_rows + begin : nullptr;
      float* ranges = trace ? c->ranges_dev.data_ptr<float>() + begin : nullptr;
      quant::encode_block_cuda(c->send_bits_dev.data_ptr<uint8_t>() + begin,
                               c->send_slot_dev.data_ptr<int32_t>() + begin, c->send_counts[r], src,
                               t.d, rows, t.gids + begin, key, send[r], ranges, status, stream);
      // The packs run in order on the stream: the last copy holds every peer's rows' verdict.
      kernels::cuda_copy_async(c->status_host.data_ptr<int64_t>(), status, sizeof(int64_t), stream);
      if (ranges != nullptr) {
        kernels::cuda_copy_async(c->ranges_host.data_ptr<float>() + begin, ranges,
                                 sizeof(float) * static_cast<size_t>(t.send_count(r)), stream);
      }
    };
    h.unpack = [t, c, recv](int r, int /*piece*/, void* stream) {
      const int64_t begin = (*t.recv_offsets)[r];
      quant::decode_block_cuda(c->recv_bits_dev.data_ptr<uint8_t>() + begin,
                               c->recv_slot_dev.data_ptr<int32_t>() + begin, c->recv_counts[r],
                               recv[r], t.d, t.dst + begin * t.d, stream);
    };
    return h;
  }

  void settle(const Transfer& t) override {
    const Tables& c = by_tag_.at(t.id.tag());
    const int64_t bad = *c.status_host.data_ptr<int64_t>();
    if (bad != -1) {
      throw quant::NonFiniteError(t.key(ctx_.rank), bad,
                                  "it holds a NaN or infinite value, or its value range "
                                  "overflows float32");
    }
    if (t.precision.ranges != nullptr) {
      const float* staged = c.ranges_host.data_ptr<float>();
      std::copy(staged, staged + t.sends(), t.precision.ranges);
    }
  }

 private:
  // The tables of t's widths (compiled again when they changed).
  Tables& tables(const Transfer& t) {
    check_widths(t);
    Tables& c = by_tag_[t.id.tag()];
    const MessageBits& bits = *t.precision.bits;
    if (c.compiled && c.send_bits == bits.send && c.recv_bits == bits.recv) return c;
    ctx_.quiesce();  // the old tables may still be read by an exchange on the device
    const int world = ctx_.num_parts;
    c.send_bits = bits.send;
    c.recv_bits = bits.recv;
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
    if (c.uploaded == nullptr) c.uploaded = std::make_unique<kernels::CudaEvent>(false);
    c.uploaded->synchronize();  // the pinned buffers' last upload
    c.send_bits_dev = upload(bits.send, at::kByte, c.send_bits_pinned, ctx_.device);
    c.recv_bits_dev = upload(bits.recv, at::kByte, c.recv_bits_pinned, ctx_.device);
    c.send_slot_dev = upload(send_slot, at::kInt, c.send_slot_pinned, ctx_.device);
    c.recv_slot_dev = upload(recv_slot, at::kInt, c.recv_slot_pinned, ctx_.device);
    c.uploaded->record(nullptr);
    if (!c.ranges_dev.defined()) {
      const int64_t n = std::max<int64_t>(t.sends(), 1);
      const at::TensorOptions pinned = at::TensorOptions().pinned_memory(true);
      c.ranges_dev = at::empty({n}, torch_options(ctx_.device, at::kFloat));
      c.ranges_host = at::empty({n}, pinned.dtype(at::kFloat));
      c.status = at::empty({1}, torch_options(ctx_.device, at::kLong));
      c.status_host = at::empty({1}, pinned.dtype(at::kLong));
    }
    return c;
  }

  CodecContext ctx_;
  ByteBlocks send_, recv_;
  std::map<int, Tables> by_tag_;
};

}  // namespace

std::unique_ptr<MessageCodec> make_cuda_block_codec(const CodecContext& ctx) {
  return std::make_unique<CudaBlockCodec>(ctx);
}

}  // namespace adaqp::exchange_detail
