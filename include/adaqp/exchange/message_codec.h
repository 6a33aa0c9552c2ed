// How the rows of one halo exchange become per-peer byte blocks and back (docs/design.md,
// section 5). A codec sets, for every peer, the bytes to send and to receive and the hooks the
// transport runs per piece: pack (gather or quantize rows into the send block) and unpack
// (dequantize a received block into rows). The exchanger (halo_exchanger.h) owns plans, buffers of
// rows and in-flight state; codecs own their byte buffers and compiled layouts.
//
// Implementations, one file each in src/exchange/:
//   full_precision_codec.cpp  rows travel as float32 (gathered into a staging block on forward);
//   cpu_block_codec.cpp       quantized blocks (quant/block_codec.h) on the host, each peer's
//                             block cut into pieces that quantize, travel and dequantize in turn;
//   cuda_block_codec.cpp      the same blocks on a CUDA device, one piece per block.
// make_quantized_codec picks the quantized one for a device, once per exchanger.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/common/device.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp {

// Which exchange: the tag is 2 * layer + direction.
struct ExchangeId {
  int layer = 0;
  Direction dir = Direction::kForward;

  int tag() const { return 2 * layer + static_cast<int>(dir); }
};

// How the messages of one exchange travel: full precision when `bits` is null, else quantized
// with these widths (MessageBits of this layer and direction) and this noise key. When quantized
// and `ranges` is not null (host memory), ranges[k] receives max - min of sent message k (send
// order) once the exchange has been settled.
struct Precision {
  const MessageBits* bits = nullptr;
  quant::QuantKey key;
  float* ranges = nullptr;
};

// One exchange's data as a codec sees it: rows to send and where received rows go.
struct Transfer {
  ExchangeId id;
  int64_t d = 0;
  const float* src = nullptr;  // rows to send
  bool gather = false;         // send row k is src[src_rows[k]] (else src[k])
  const int64_t* src_rows = nullptr;
  const int64_t* gids = nullptr;                       // key of send row k (Boundary)
  float* dst = nullptr;                                // received rows, receive order
  float* staging = nullptr;                            // full precision gather: send rows, in order
  const std::vector<int64_t>* send_offsets = nullptr;  // rows per peer, send order
  const std::vector<int64_t>* recv_offsets = nullptr;  // rows per peer, receive order
  Precision precision;

  bool quantized() const { return precision.bits != nullptr; }
  int64_t sends() const { return send_offsets->back(); }
  int64_t recvs() const { return recv_offsets->back(); }
  int64_t send_count(int r) const { return (*send_offsets)[r + 1] - (*send_offsets)[r]; }
  int64_t recv_count(int r) const { return (*recv_offsets)[r + 1] - (*recv_offsets)[r]; }
  // The noise key of this layer and direction as rank `sender` encodes it. A backward message's
  // row key (its node's id, or the forward message's key) is the same at every rank that sends a
  // partial gradient for it, and the receiver adds those up: the seed is mixed with the sender
  // there, so that their rounding errors are independent, as the width solver's variance model
  // takes them (docs/design.md, section 5); a forward message's noise depends on its key alone.
  quant::QuantKey key(int sender) const;
};

// The bytes of one exchange per peer (0 for this rank), and each block's piece ends (empty: one).
struct PeerLayout {
  std::vector<size_t> send_bytes, recv_bytes;
  std::vector<std::vector<size_t>> send_pieces, recv_pieces;
};

// What every codec of one exchanger shares.
struct CodecContext {
  int rank = 0, num_parts = 1;
  Device device;
  int64_t piece_elements = 0;  // CPU blocks: HaloExchangerOptions::piece_elements
  // Waits for every exchange still in flight (before a buffer they may use is replaced).
  std::function<void()> quiesce;
};

class MessageCodec {
 public:
  virtual ~MessageCodec() = default;

  // The per-peer bytes of exchange `t` (every quantized size from quant::message_bytes).
  virtual const PeerLayout& layout(const Transfer& t) = 0;
  // Points `b` (ExchangeBuffers::none) at this exchange's blocks and returns the hooks that pack
  // and unpack them. The blocks stay valid until the exchange is settled.
  virtual ExchangeHooks bind(const Transfer& t, ExchangeBuffers& b) = 0;
  // Compiles what exchange `t` will need ahead of it (a device codec's tables); between epochs.
  virtual void prepare(const Transfer& t) { (void)t; }
  // Completes exchange `t` once it has completed: copies the traced ranges and throws
  // quant::NonFiniteError for a row the device could not quantize. The host codecs do both in
  // the pack and have nothing left to do.
  virtual void settle(const Transfer& t) { (void)t; }
};

// Rows as they are, float32.
std::unique_ptr<MessageCodec> make_full_precision_codec(const CodecContext& ctx);
// The quantized block codec of ctx.device; ConfigError for a CUDA device in a build without CUDA.
std::unique_ptr<MessageCodec> make_quantized_codec(const CodecContext& ctx);

// A plan's widths must cover exactly the exchange's messages (codec tables index them).
void check_widths(const Transfer& t);

}  // namespace adaqp
