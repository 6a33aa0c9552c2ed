// The communicator every worker uses: one abstract interface, one subclass per transport (MPI now,
// NCCL on GPUs). Halo exchanges are asynchronous and move opaque byte blocks, so full-precision
// rows and packed quantized blocks travel the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace adaqp {

// One halo exchange: send[r] (send_bytes[r] bytes) goes to rank r, recv[r] (recv_bytes[r] bytes)
// arrives from rank r. Entries of zero bytes (and the own rank) are skipped. The buffers must stay
// alive and untouched until the exchange's Work has completed. Where they live is the transport's
// contract: host memory for MpiCommunicator, device memory of the communicator's GPU for
// NcclCommunicator (nccl_communicator.h).
struct ExchangeBuffers {
  std::vector<const void*> send;
  std::vector<size_t> send_bytes;
  std::vector<void*> recv;
  std::vector<size_t> recv_bytes;
};

// An exchange in flight.
class Work {
 public:
  virtual ~Work() = default;
  // True once every send and receive has completed (never blocks).
  virtual bool test() = 0;
  // Blocks until completion. Throws CommError naming the peers still pending when the
  // communicator's timeout passes, or the peer whose transfer failed. After a timeout the exchange
  // is still in flight: wait() may be called again, or destroying the Work cancels what is
  // pending (logging a warning). A transport that cannot cancel a transfer (NCCL) aborts its
  // communicator on the timeout instead and says so in the CommError.
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Starts a halo exchange; `tag` separates exchanges that may be in flight together.
  virtual std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers, int tag) = 0;

  // In-place collectives over all ranks (blocking, bounded by the timeout).
  virtual void allreduce_sum(float* data, size_t n) = 0;
  virtual void allreduce_sum(double* data, size_t n) = 0;
  virtual void allreduce_sum(int64_t* data, size_t n) = 0;
  virtual void allreduce_max(double* data, size_t n) = 0;
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  // out[r * bytes .. (r+1) * bytes) = rank r's `in`; out must hold size() * bytes.
  virtual void allgather(const void* in, void* out, size_t bytes) = 0;
  virtual void barrier() = 0;

  // Bound on every blocking wait, in seconds.
  virtual void set_timeout(double seconds) = 0;
  virtual double timeout() const = 0;

  // True when a ProgressThread may drive this communicator's exchanges (every call from it) while
  // the thread that owns the communicator computes without calling it. False by default: the
  // owner then drives its exchanges itself.
  virtual bool allows_progress_thread() const { return false; }
};

// Start-up failure agreement: every rank calls this once with whether it failed locally; all get
// true if any rank failed, and *first_failed (when given) is the lowest failing rank, or -1. Lets
// every rank exit non-zero together: the failing rank reports its own error, the others report
// "aborting: rank R failed during start-up".
bool any_rank_failed(Communicator& comm, bool local_failed, int* first_failed = nullptr);

}  // namespace adaqp
