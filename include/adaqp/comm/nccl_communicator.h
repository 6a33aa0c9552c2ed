// The NCCL transport of Communicator, for one GPU per rank. One NCCL communicator per job, created
// from a unique id that rank 0 broadcasts over MPI, runs every transfer on its own communication
// stream; CUDA events tell the host when a transfer has finished.
//
// Where data must live:
// - exchange(): either every send/recv buffer is device memory on this communicator's device, or
//   every one is host memory (small host-side exchanges, e.g. the bit-widths of the adaptive
//   scheme), which go through the MPI communicator; a mix is an InvariantError. A device exchange
//   is enqueued on the communication stream (stream()), after the work enqueued so far on
//   ExchangeOptions::producer_stream: the pack hooks (enqueuing work on stream()), ONE grouped
//   ncclSend/ncclRecv to every peer, then the unpack hooks in rank order. Work::wait_on_stream
//   orders a consumer stream after all of it without blocking the host; Work::test()/wait()
//   report completion on the host; once wait() has returned, the received bytes may be read by
//   work on any stream. Work::timing() comes from CUDA events on the communication stream.
// - Collectives dispatch on where their data lives: device memory goes through NCCL on the
//   communication stream, after the work enqueued so far on the legacy default stream (libtorch's
//   compute stream: e.g. the backward pass that wrote the gradients), and returns once done; host
//   memory goes through the MPI communicator (loss sums, flags, start-up agreement). allgather
//   needs `in` and `out` in the same kind of memory.
// - barrier() is an NCCL all-reduce: it returns once every rank reached it and every earlier
//   operation on the communication stream has completed.
//
// Failure: every wait is bounded by the timeout. NCCL cannot cancel a transfer, so on a timeout or
// an asynchronous NCCL error the NCCL communicator is aborted (ncclCommAbort) and CommError thrown;
// every later NCCL operation throws CommError (host-memory collectives still work, through MPI, so
// the ranks can agree to stop) instead of staying in flight as the MPI transport's exchanges do.
// Destroying an unfinished Work waits for it (bounded by the timeout) and aborts on expiry, so its
// buffers are never written after the Work is gone.
//
// Several ranks on one GPU: NCCL refuses them ("Duplicate GPU detected") unless each rank has a
// distinct NCCL_HOSTID, which makes NCCL treat them as separate hosts (socket transport).
//
// Threading: one thread at a time may call a communicator and the Works it created.
#pragma once

#include "adaqp/common/timeouts.h"
#include "adaqp/config.h"

#if ADAQP_WITH_NCCL

#include <mpi.h>

#include <memory>

#include "adaqp/comm/communicator.h"

namespace adaqp {

struct NcclCommunicatorOptions {
  // CUDA device of this rank, in [0, number of visible devices).
  int device = 0;
  // Bound on every blocking wait, in seconds, in (0, 1e6].
  double timeout_s = kDefaultTimeoutS;
};

class NcclCommunicator : public Communicator {
 public:
  // Collective over `comm`: checks the device, creates the communication stream, broadcasts rank
  // 0's NCCL unique id and creates the NCCL communicator (non-blocking mode, so a missing peer
  // times out). All ranks agree on local start-up failures first: a rank that failed throws its
  // own error, the others CommError naming it. Throws ConfigError for a bad device or timeout,
  // CommError when NCCL fails or times out, Error when CUDA fails. Leaves `options.device` the
  // calling thread's current device (no other device gets a context).
  NcclCommunicator(MPI_Comm comm, const NcclCommunicatorOptions& options);
  // Finalizes the NCCL communicator (bounded by the timeout, aborting on expiry) once no Work
  // still uses it; never throws.
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override;
  int size() const override;

  // Device memory: one grouped ncclSend/ncclRecv to every peer with bytes > 0, on the
  // communication stream, between the hooks. NCCL has no tags: exchanges in flight together must
  // be started in the same order on every rank (they complete in that order); the tag only names
  // the exchange in errors. Buffer shape as in MpiCommunicator::exchange (InvariantError
  // otherwise). Host memory: MpiCommunicator::exchange.
  std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                 const ExchangeOptions& options) override;

  void allreduce_sum(float* data, size_t n) override;
  void allreduce_sum(double* data, size_t n) override;
  void allreduce_sum(int64_t* data, size_t n) override;
  void allreduce_max(double* data, size_t n) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void allgather(const void* in, void* out, size_t bytes) override;
  void barrier() override;

  void set_timeout(double seconds) override;
  double timeout() const override;

  bool device_memory() const override { return true; }
  // A duplicate of the MPI communicator that carries host memory (MpiCommunicator::host_duplicate).
  std::unique_ptr<Communicator> host_duplicate() override;

  // The CUDA device and the communication stream (a cudaStream_t, as void* so that this header
  // needs no CUDA types).
  int device() const;
  void* stream() const;
  // Makes later work on the communication stream wait for the work enqueued on `producer` (a
  // cudaStream_t; nullptr is the legacy default stream) so far, without blocking the host.
  void stream_wait(void* producer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The communicator the GPU trainer uses: one rank per `device`, with the given timeout.
std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm comm, int device, double timeout_s);

}  // namespace adaqp

#endif  // ADAQP_WITH_NCCL
