// The halo exchange of one worker (design notes, section 4), split into start and finish so that
// local aggregation runs while the messages are in flight:
//   forward:  start_forward gathers the boundary rows of H for every peer and starts the
//             exchange; finish_forward waits, and the halo block holds the peers' rows.
//   backward: start_backward sends each halo block of partial gradients to its owner;
//             finish_backward waits and scatter-adds what the peers sent into the boundary rows.
// Messages travel at full precision here. Start is the "pre" step (gather, later also
// quantization) and finish the "post" step (later also dequantization) of every exchange.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/part.h"

namespace adaqp {

// Time and volume of the exchanges since the last reset.
struct CommStats {
  double time_s = 0;       // spent inside start_* and finish_* (packing, posting, waiting)
  int64_t bytes_sent = 0;  // payload bytes this worker sent
  int64_t exchanges = 0;   // exchanges started
};

class HaloExchanger {
 public:
  // `part` and `comm` must outlive the exchanger.
  HaloExchanger(const Part& part, Communicator& comm);

  // Starts sending the boundary rows of h (num_owned x d, row-major) to every peer; the peers'
  // rows arrive in halo_out (num_halo x d), which must stay untouched until finish_forward.
  void start_forward(const float* h, int64_t d, float* halo_out, int tag);
  void finish_forward();

  // Starts sending halo partial gradients (num_halo x d) to their owners; halo_grad must stay
  // untouched until finish_backward.
  void start_backward(const float* halo_grad, int64_t d, int tag);
  // Waits, then adds every received row into dh (num_owned x d) at its boundary row.
  void finish_backward(float* dh);

  const CommStats& stats() const { return stats_; }
  void reset_stats() { stats_ = CommStats{}; }

 private:
  void start(const ExchangeBuffers& buffers, int tag, double t0);
  void finish();

  const Part& part_;
  Communicator& comm_;
  std::vector<float> send_buf_;  // forward: boundary rows, grouped by peer
  std::vector<float> recv_buf_;  // backward: partial gradients of boundary rows, grouped by peer
  int64_t width_ = 0;            // d of the exchange in flight
  std::unique_ptr<Work> work_;
  CommStats stats_;
};

}  // namespace adaqp
