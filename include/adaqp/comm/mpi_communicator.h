// The MPI transport of Communicator. Every operation is non-blocking underneath (MPI_Isend/Irecv,
// MPI_Iallreduce, ...) and every wait polls with a short backoff, so a dead or stalled peer turns
// into a CommError on the survivors after the timeout instead of a hang.
//
// Exchanges: every receive is posted first, then each peer's block is packed (hook) and sent;
// blocks are unpacked (hook) as they arrive. A background exchange runs all of that on the
// communicator's progress thread (progress_thread.h; one background exchange at a time), with
// OpenMP limited to one thread there so that the hooks do not compete with the caller's compute
// threads.
//
// Threading: one thread at a time may call a communicator and the Works it created; which thread
// may change between calls when MPI provides at least MPI_THREAD_SERIALIZED.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/progress_thread.h"
#include "adaqp/common/timeouts.h"

namespace adaqp {

struct MpiCommunicatorOptions {
  // Bound on every blocking wait, in seconds, in (0, 1e6].
  double timeout_s = kDefaultTimeoutS;
  // Largest single MPI message: larger transfers and collectives are split into chunks of at most
  // this many bytes, each its own request (MPI counts are int). In [1, INT_MAX].
  size_t max_chunk_bytes = size_t{1} << 30;
};

class MpiCommunicator : public Communicator {
 public:
  // Works on its own duplicate of `comm` (MPI_Comm_dup, with MPI_ERRORS_RETURN), freed on
  // destruction. Throws ConfigError for an invalid timeout, InvariantError for an invalid chunk
  // size, CommError if MPI fails.
  MpiCommunicator(MPI_Comm comm, const MpiCommunicatorOptions& options);
  // Waits (bounded by the timeout) for collectives that timed out earlier, then frees the
  // duplicate. Works created by this communicator may outlive it.
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Tags must lie in [0, MPI_TAG_UB] (InvariantError otherwise), as must the buffers' shape (one
  // entry per rank, non-null where bytes > 0). Background exchanges need MPI_THREAD_SERIALIZED;
  // without it they run on the caller like the others.
  std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                 const ExchangeOptions& options) override;

  // A collective that times out leaves the communicator unusable: MPI offers no way to cancel a
  // collective, so the pending one is kept (its buffer may still be written until the
  // communicator is destroyed) and every later collective throws CommError.
  void allreduce_sum(float* data, size_t n) override;
  void allreduce_sum(double* data, size_t n) override;
  void allreduce_sum(int64_t* data, size_t n) override;
  void allreduce_max(double* data, size_t n) override;
  void broadcast(void* data, size_t bytes, int root) override;
  // bytes must not exceed max_chunk_bytes (InvariantError otherwise).
  void allgather(const void* in, void* out, size_t bytes) override;
  void barrier() override;

  void set_timeout(double seconds) override;
  double timeout() const override;

  // True when MPI was initialised with at least MPI_THREAD_SERIALIZED (background exchanges then
  // run on the progress thread).
  bool allows_progress_thread() const override { return serialized_; }
  // A duplicate of this communicator's MPI communicator where MPI provides MPI_THREAD_MULTIPLE.
  std::unique_ptr<Communicator> host_duplicate() override;

 private:
  template <typename T>
  void allreduce(T* data, size_t n, MPI_Datatype type, MPI_Op op, const char* name);
  // Waits for one collective's requests; on timeout or failure keeps the pending ones and marks
  // the communicator unusable (throwing CommError).
  void finish_collective(std::vector<MPI_Request>& requests, const char* name);
  // Marks the communicator unusable after MPI returned `code`, keeps `posted`, throws CommError.
  [[noreturn]] void abandon_collective(std::vector<MPI_Request> posted, const char* name, int code);
  void check_usable(const char* name) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int tag_ub_ = 32767;
  bool serialized_ = false;
  bool multiple_ = false;  // MPI_THREAD_MULTIPLE: host_duplicate()
  size_t max_chunk_bytes_;
  // Shared with the Works so they see timeout changes and may outlive the communicator.
  std::shared_ptr<std::atomic<double>> timeout_s_;
  // Requests of collectives that timed out, and why the communicator is unusable ("" if usable).
  std::vector<MPI_Request> stale_;
  std::string broken_;
  std::shared_ptr<ProgressThread> thread_;  // created by the first background exchange
};

// The communicator the trainer uses, with default options and the given timeout.
std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm comm, double timeout_s);

}  // namespace adaqp
