// The halo exchange of one worker (design notes, sections 4 and 5), split into start and finish
// so that local aggregation can run while the messages are in flight:
//   forward:  start_forward packs the boundary rows of H for every peer (a gather at full
//             precision, quantization otherwise) and sends them; finish_forward waits, and the
//             halo block then holds the peers' rows (dequantized as each peer's block arrives).
//   backward: start_backward packs each halo block of partial gradients and sends it to its
//             owner; finish_backward waits; add_received_gradients then adds what the peers sent
//             into the boundary rows.
// Every peer has its own send and receive transfer: a peer's block is sent as soon as it is
// packed, and unpacked as soon as it has arrived.
//
// Schedule (HaloExchangerOptions::overlap):
// - off: start_* runs the whole exchange before returning (finish_* has nothing left to do);
// - on, with a communicator that allows a progress thread: start_* hands the exchange to a
//   ProgressThread, which packs, posts, tests and unpacks while the caller computes; finish_*
//   waits for it. Packing and unpacking there run single-threaded (OpenMP), beside the caller's
//   threads;
// - on, without one (MPI below MPI_THREAD_SERIALIZED, or a transport that progresses by itself):
//   start_* packs and posts everything and finish_* drives the exchange to completion, so only
//   what the transport moves on its own overlaps the caller's computation.
// The caller must not use the communicator between start_* and finish_*.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/progress_thread.h"
#include "adaqp/model/bit_assignment.h"
#include "adaqp/model/message_codec.h"
#include "adaqp/partition/part.h"
#include "adaqp/quant/quantizer.h"

namespace adaqp {

// Which exchange: the tag is 2 * layer + direction.
struct ExchangeId {
  int layer = 0;
  Direction dir = Direction::kForward;
};

// How the messages of one exchange travel: full precision when `bits` is null, else quantized
// with these widths (MessageBits of this layer and direction) and this noise key. When quantized
// and `ranges` is not null, ranges[k] receives max - min of sent message k (send order), which
// must stay untouched until the exchange has finished.
struct Precision {
  const MessageBits* bits = nullptr;
  quant::QuantKey key;
  float* ranges = nullptr;
};

// Steady-clock timestamps (seconds) of the last exchange, for checking the schedule, and its codec
// time.
struct ExchangeTrace {
  double started_s = 0;    // start_* entered
  double completed_s = 0;  // the last transfer completed and was unpacked
  double finish_s = 0;     // finish_* entered
  double quant_s = 0;      // quantizing and dequantizing its blocks (0 at full precision)
};

// Time and volume of the exchanges since the last reset.
struct CommStats {
  double comm_time_s = 0;     // from start_* until the exchange completed, summed over exchanges
  double exposed_time_s = 0;  // the caller's time inside start_* and finish_* (blocked)
  double quant_time_s = 0;    // quantization and dequantization, on whichever thread
  int64_t bytes_sent = 0;     // payload bytes this worker sent
  std::vector<int64_t> bytes_forward, bytes_backward;   // bytes_sent by layer
  std::vector<double> comm_forward_s, comm_backward_s;  // comm_time_s by layer
  // By layer: the timestamps of the layer's last exchange (e.g. to measure it from the moment the
  // last rank started it, across ranks: bit_assigner.h).
  std::vector<ExchangeTrace> trace_forward, trace_backward;
  int64_t exchanges = 0;  // exchanges started
};

struct HaloExchangerOptions {
  bool overlap = false;
};

class HaloExchanger {
 public:
  // `part` and `comm` must outlive the exchanger.
  HaloExchanger(const Part& part, Communicator& comm, const HaloExchangerOptions& opt);
  ~HaloExchanger();
  HaloExchanger(const HaloExchanger&) = delete;
  HaloExchanger& operator=(const HaloExchanger&) = delete;

  // Sends the boundary rows of h (num_owned x d, row-major) to every peer; the peers' rows arrive
  // in halo_out (num_halo x d). h and halo_out must stay untouched until finish_forward.
  void start_forward(const float* h, int64_t d, float* halo_out, const ExchangeId& id,
                     const Precision& precision);
  void finish_forward();

  // Sends halo partial gradients (num_halo x d) to their owners; halo_grad must stay untouched
  // until finish_backward.
  void start_backward(const float* halo_grad, int64_t d, const ExchangeId& id,
                      const Precision& precision);
  void finish_backward();
  // Adds every row received by the last backward exchange into dh (num_owned x d) at its
  // boundary row, peer by peer in rank order.
  void add_received_gradients(float* dh) const;

  // True when exchanges run on a progress thread.
  bool progress_thread() const { return thread_ != nullptr; }
  const CommStats& stats() const { return stats_; }
  void reset_stats() { stats_ = CommStats{}; }
  const ExchangeTrace& last_trace() const { return trace_; }

 private:
  struct Flight;

  void start(std::unique_ptr<Flight> flight);
  void finish();

  const Part& part_;
  Communicator& comm_;
  HaloExchangerOptions opt_;
  std::vector<int64_t> boundary_gid_;  // global id of every send_idx row
  std::vector<float> send_rows_;       // forward, full precision: gathered boundary rows
  std::vector<float> recv_rows_;       // backward: received partial gradients, send_idx order
  std::vector<std::vector<uint8_t>> send_bytes_, recv_bytes_;  // quantized blocks, per peer
  int64_t width_ = 0;                                          // d of the last exchange
  std::unique_ptr<Flight> flight_;
  std::unique_ptr<ProgressThread> thread_;
  CommStats stats_;
  ExchangeTrace trace_;
};

}  // namespace adaqp
