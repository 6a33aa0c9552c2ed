// The halo exchange of one worker (docs/design.md, sections 4 and 5), split into start and finish
// so that local aggregation can run while the messages are in flight. What travels is a Boundary
// (partition/boundary.h): rows sent to and received from each peer, in an order both ends share.
//   forward:  start_forward sends the rows to every peer (full precision or quantized); after
//             finish_forward the received rows are in place (dequantized as each peer's block
//             arrives). With a send list (the rows layout) the sent rows are gathered from H;
//             without (the cover layout) the caller passes them in send order.
//   backward: start_backward sends the gradients of the received rows to their senders;
//             finish_backward, then, with a send list, add_received_gradients adds what the peers
//             sent into the rows of the send list (peer by peer in rank order, so the sums do not
//             depend on arrivals); without one, received_gradients gives them to the caller.
// Each exchange is ONE Communicator::exchange call: packing (gather or quantize) and unpacking
// (dequantize) are its per-peer hooks, so that a peer's block is sent as soon as it is packed and
// unpacked as soon as it has arrived. How rows become blocks is the codec's (message_codec.h): the
// full-precision one, or the quantized one of the device, chosen at construction.
//
// Devices (HaloExchangerOptions::device): on the CPU the rows are host memory and the transport
// is MPI; on CUDA they are device memory of the worker's GPU, the transport is NCCL (a device
// transport), and the hooks, the transfers and the unpacking run on the communication stream,
// ordered after the compute stream (libtorch's, the legacy default stream) by CUDA events.
//
// Schedule (HaloExchangerOptions::overlap; set_overlap turns it off and on between epochs):
// - off: start_* completes the exchange (CPU) or makes the compute stream wait for it (CUDA)
//   before returning, so the A_local work the caller does next runs after it;
// - on: start_* only starts it; finish_* waits (CPU: on the host; CUDA: the compute stream waits
//   for the exchange's completion event, the host does not block). On MPI the exchange runs on
//   the communicator's progress thread while the caller computes (background exchange).
// The caller must not use the communicator between start_* and finish_*.
//
// Bookkeeping (statistics, traces, the traced value ranges) of a finished exchange is completed
// by settle(), which waits for the exchanges still running on the device (bounded by the
// timeout); stats() and last_trace() settle first.
//
// A row that cannot be quantized (NaN or Inf, a range overflowing float32; the training has
// diverged) is a quant::NonFiniteError: on the CPU from the pack, before anything is sent, naming
// the element; on CUDA from settle(), naming the lowest global id of such rows (the kernel skips
// them, so their bytes are undefined and the epoch's results must be discarded).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/comm/exchange_stats.h"
#include "adaqp/common/device.h"
#include "adaqp/exchange/message_codec.h"
#include "adaqp/kernels/stream_timer.h"
#include "adaqp/partition/boundary.h"

namespace adaqp {

struct HaloExchangerOptions {
  bool overlap = false;
  Device device;  // where the rows live; CUDA needs a device transport (NcclCommunicator)
  // CPU codec: a peer's quantized block travels in up to 8 pieces of at least this many elements
  // (rows x width), so that quantizing, sending and dequantizing overlap; the values sent do not
  // depend on it. Both ends must use the same value.
  int64_t piece_elements = int64_t{1} << 16;
};

class HaloExchanger {
 public:
  // `boundary` and `comm` must outlive the exchanger. `send_idx` (host memory, copied): the row of
  // H each sent row is (rows layout), or null (the caller passes the sent rows in order).
  HaloExchanger(const Boundary& boundary, const std::vector<int64_t>* send_idx, Communicator& comm,
                const HaloExchangerOptions& opt);
  ~HaloExchanger();
  HaloExchanger(const HaloExchanger&) = delete;
  HaloExchanger& operator=(const HaloExchanger&) = delete;

  // Sends the rows of h (row-major, on the device: with a send list any rows it indexes, else the
  // sent rows in send order) to every peer; the peers' rows arrive in halo_out (received rows x
  // d). h and halo_out must stay untouched until finish_forward.
  void start_forward(const float* h, int64_t d, float* halo_out, const ExchangeId& id,
                     const Precision& precision);
  void finish_forward();

  // Sends the gradients of the received rows (received rows x d) to their senders; halo_grad must
  // stay untouched until finish_backward.
  void start_backward(const float* halo_grad, int64_t d, const ExchangeId& id,
                      const Precision& precision);
  void finish_backward();
  // With a send list: adds every row received by the last backward exchange into dh (num_owned x
  // d) at its row of the send list, peer by peer in rank order (CUDA: enqueued on the compute
  // stream).
  void add_received_gradients(float* dh);
  // Without one: the rows received by the last backward exchange (sent rows x d, send order),
  // handed over (the exchanger keeps no reference).
  at::Tensor received_gradients();

  // Compiles what the quantized exchanges of `plan` need on the device before they start (on
  // CUDA; the CPU codec is cheap enough at the exchange), so that the epoch's exchanges do not wait
  // for the host. Call between epochs (no exchange in flight).
  void prepare(const QuantPlan& plan);

  // True when exchanges run on a progress thread (overlap on MPI with thread support).
  bool progress_thread() const;
  // The schedule of the exchanges started from now on: overlap where the exchanger was built with
  // it and `on`, else off (Vanilla's). Between epochs; an exchange in flight keeps its own.
  void set_overlap(bool on);
  bool overlaps() const { return overlap_; }
  // Waits for every exchange still in flight or not yet settled (bounded by the timeout), so that
  // buffers they may use can be freed.
  void quiesce();
  // Completes the bookkeeping of every finished exchange (waits for those still running on the
  // device). Throws quant::NonFiniteError if a device exchange met an unquantizable row.
  void settle();
  const CommStats& stats();
  void reset_stats();
  const ExchangeTrace& last_trace();

 private:
  struct Flight;

  void start(Transfer t);
  void finish();
  // A new boundary_rows_ of rows x d floats.
  float* boundary_rows(int64_t rows, int64_t d);
  // The exchange of one layer and direction as the codecs see it, without rows.
  Transfer transfer_of(const ExchangeId& id, int64_t d, const Precision& precision) const;

  const Boundary& boundary_;
  Communicator& comm_;
  HaloExchangerOptions opt_;
  bool overlap_ = false;  // the schedule now (set_overlap)
  // Index arrays where the rows live: the send list, the keys of sent (forward) and received
  // (backward) rows.
  bool has_send_list_ = false;
  at::Tensor send_idx_, send_keys_, recv_keys_;
  // Sent rows in send order, full precision: gathered for a forward exchange (freed once sent),
  // received partial gradients of a backward one (freed once added or handed over). Allocated per
  // exchange, so that a worker holds no exchange buffer between exchanges.
  at::Tensor boundary_rows_;
  int64_t width_ = 0;  // d of the last backward exchange
  // The transport runs on device streams (NCCL): the host's clock does not time its work.
  bool device_transport_ = false;
  std::unique_ptr<MessageCodec> full_, quantized_;
  std::unique_ptr<Flight> flight_;                 // started, not finished
  std::vector<std::unique_ptr<Flight>> finished_;  // finished, not settled
  kernels::StreamTimer exposed_;
  CommStats stats_;
  ExchangeTrace trace_;
};

}  // namespace adaqp
