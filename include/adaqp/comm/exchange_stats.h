// What the halo exchanges of a worker cost: per exchange its timestamps and codec time, and their
// time and volume since the last reset (HaloExchanger fills them; the trainer's epoch record and
// the adaptive scheme's time model read them).
#pragma once

#include <cstdint>
#include <vector>

namespace adaqp {

// Steady-clock timestamps (seconds) of the last settled exchange, for checking the schedule, and
// its codec time.
struct ExchangeTrace {
  double started_s = 0;    // CPU: start_* entered; CUDA: the exchange's first work ran
  double completed_s = 0;  // the last transfer completed and was unpacked
  double finish_s = 0;     // finish_* entered
  double quant_s = 0;      // quantizing and dequantizing its blocks (0 at full precision)
  double hidden_s = 0;     // the caller's work while it was in flight, in the overlapped modes
                           // (else 0): CPU: finish_s - started_s; CUDA: from started_s until the
                           // compute stream reached finish_* (ExchangeTiming::needed_s)
};

// Time and volume of the exchanges since the last reset.
struct CommStats {
  double comm_time_s = 0;     // from each exchange's start until it completed, summed
  double exposed_time_s = 0;  // CPU: the caller blocked in start_*/finish_*; CUDA: the compute
                              // stream waiting for exchanges
  double quant_time_s = 0;    // quantization and dequantization, on whichever thread or stream
  // The caller's thread readying the codecs before exchanges: compiling a layer's tables for new
  // widths (QuantPlan, at the epoch's start on a GPU; at the exchange on the CPU), placing buffers
  // (growing them waits for exchanges in flight). Host time: on a GPU it may overlap the compute
  // stream's waits counted in exposed_time_s.
  double codec_setup_time_s = 0;
  int64_t bytes_sent = 0;                               // payload bytes this worker sent
  std::vector<int64_t> bytes_forward, bytes_backward;   // bytes_sent by layer
  std::vector<double> comm_forward_s, comm_backward_s;  // comm_time_s by layer
  // By layer: the timestamps of the layer's last exchange (e.g. to measure it from the moment the
  // last rank started it, across ranks: assign/adaptive_policy.h).
  std::vector<ExchangeTrace> trace_forward, trace_backward;
  int64_t exchanges = 0;  // exchanges started
};

}  // namespace adaqp
