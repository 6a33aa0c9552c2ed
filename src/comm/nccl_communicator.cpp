#include "adaqp/comm/nccl_communicator.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/common/backoff.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/wait_bound.h"
#include "adaqp/kernels/cuda_support.h"

namespace adaqp {
namespace {

// Where a CUDA call failed, for its error.
std::string where(int rank, int device) {
  return fmt::format("on rank {} (device {})", rank, device);
}

// Pause between two polls: yields first (latency), then sleeps 100 us (CPU).
Backoff poll_pause() {
  return Backoff(1000, std::chrono::microseconds(100), std::chrono::microseconds(100));
}

class NcclState;

// Hands a pooled event back to its state's pool (NcclState::record).
struct EventReturn {
  NcclState* state = nullptr;
  void operator()(cuda::Event* event) const;
};
using PooledEvent = std::unique_ptr<cuda::Event, EventReturn>;

// The NCCL communicator, its device, stream and failure state: shared by the communicator and its
// Works, so that a Work may outlive the communicator. Owns the ncclComm_t: finalized on
// destruction, or aborted (after which `comm` is null and `broken` says why).
class NcclState {
 public:
  NcclState(int rank, int size, int device, double timeout_s)
      : rank(rank),
        size(size),
        device(device),
        timeout_s(timeout_s),
        stream(where(rank, device)),
        clock_stream(where(rank, device)),
        barrier_word(1, where(rank, device)),
        producer_ready(false, where(rank, device)) {}

  // Finalizes the NCCL communicator before the stream and buffer members go.
  ~NcclState() {
    if (comm == nullptr) return;
    int previous = device;
    cudaGetDevice(&previous);
    cudaSetDevice(device);
    shutdown();
    cudaSetDevice(previous);
  }

  NcclState(const NcclState&) = delete;
  NcclState& operator=(const NcclState&) = delete;

  // Creates the NCCL communicator in non-blocking mode (so that a missing peer times out).
  void init(const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    nccl(ncclCommInitRankConfig(&comm, size, id, rank, &config), "ncclCommInitRankConfig");
  }

  // The one check of an NCCL call. ncclInProgress (non-blocking mode) is awaited, bounded by the
  // timeout; any failure or expiry aborts the communicator and throws CommError naming the call.
  void nccl(ncclResult_t result, const char* call) {
    if (result == ncclInProgress) result = settled_state();
    if (result == ncclSuccess) return;
    if (result == ncclInProgress)
      fail(
          fmt::format("{} timed out after {} s on rank {} (a peer stalled, died, or is busy for "
                      "longer than communication.timeout_s)",
                      call, timeout_s.load(), rank));
    fail(fmt::format("{} failed on rank {} (device {}): {} ({})", call, rank, device,
                     ncclGetErrorString(result), ncclGetLastError(comm)));
  }

  // True once `event` has completed. Throws (after aborting) on an asynchronous NCCL error.
  bool poll(cudaEvent_t event, const std::string& what) {
    check_usable(what);
    const cudaError_t query = cudaEventQuery(event);
    if (query == cudaSuccess) return true;
    if (query != cudaErrorNotReady)
      fail(fmt::format("{}: cudaEventQuery failed on rank {} (device {}): {}", what, rank, device,
                       cudaGetErrorString(query)));
    ncclResult_t async = ncclSuccess;
    const ncclResult_t result = ncclCommGetAsyncError(comm, &async);
    if (result != ncclSuccess) async = result;
    if (async != ncclSuccess && async != ncclInProgress)
      fail(fmt::format("{}: asynchronous NCCL error on rank {} (device {}): {} ({})", what, rank,
                       device, ncclGetErrorString(async), ncclGetLastError(comm)));
    return false;
  }

  // Polls `event` until it completes; aborts and throws CommError when the timeout passes first.
  void wait(cudaEvent_t event, const std::string& what) {
    const double seconds = timeout_s.load();
    WaitBound bound(seconds);
    Backoff pause = poll_pause();
    while (!poll(event, what)) {
      if (bound.passed())
        fail(
            fmt::format("{} timed out after {} s on rank {} (a peer stalled, died, or is busy for "
                        "longer than communication.timeout_s)",
                        what, seconds, rank));
      pause.pause();
    }
  }

  // Records the work enqueued so far on `on` (the communication stream when null) in a timing
  // event from the pool, to which it returns when released: an exchange records five, and
  // creating and destroying them every time costs driver calls.
  PooledEvent record(cudaStream_t on = nullptr) {
    PooledEvent event(nullptr, EventReturn{this});
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!pool_.empty()) {
        event.reset(pool_.back().release());
        pool_.pop_back();
      }
    }
    if (event == nullptr) event.reset(new cuda::Event(/*timing=*/true, where(rank, device)));
    ADAQP_CUDA_CHECK_AT(cudaEventRecord(event->get(), on != nullptr ? on : stream.get()),
                        where(rank, device));
    return event;
  }

  void give_back(cuda::Event* event) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pool_.emplace_back(event);
  }

  // Makes later work on the communication stream wait for the work enqueued on `producer` so far.
  // One event serves every call: a stream wait takes the event's state when it is enqueued.
  void wait_for(cudaStream_t producer) {
    ADAQP_CUDA_CHECK_AT(cudaEventRecord(producer_ready.get(), producer), where(rank, device));
    ADAQP_CUDA_CHECK_AT(cudaStreamWaitEvent(stream.get(), producer_ready.get(), 0),
                        where(rank, device));
  }

  // Seconds from `from` to `to`, both recorded and completed.
  double elapsed_s(const cuda::Event& from, const cuda::Event& to) const {
    float ms = 0;
    ADAQP_CUDA_CHECK_AT(cudaEventElapsedTime(&ms, from.get(), to.get()), where(rank, device));
    return static_cast<double>(ms) * 1e-3;
  }

  void check_usable(const std::string& what) const {
    if (comm == nullptr)
      throw CommError(
          fmt::format("{} on rank {}: NCCL communicator unusable after an earlier "
                      "failure: {}",
                      what, rank, broken));
  }

  // Aborts the NCCL communicator (once) and records why; never throws.
  void abort(const std::string& why) {
    if (comm == nullptr) return;
    broken = why;
    const ncclResult_t result = ncclCommAbort(comm);
    comm = nullptr;
    if (result != ncclSuccess)
      spdlog::error("ncclCommAbort failed on rank {}: {}", rank, ncclGetErrorString(result));
  }

  [[noreturn]] void fail(const std::string& why) {
    abort(why);
    throw CommError(why + "; NCCL communicator aborted");
  }

  const int rank;
  const int size;
  const int device;
  std::atomic<double> timeout_s;
  cuda::Stream stream;
  // An idle stream for the reference events that map device times onto the host clock (one
  // recorded on `stream` would wait for whatever else is queued there).
  cuda::Stream clock_stream;
  // One int on the device: the payload of barrier() (its value is irrelevant).
  cuda::DeviceBuffer<int> barrier_word;
  cuda::Event producer_ready;
  ncclComm_t comm = nullptr;
  std::string broken;

 private:
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<cuda::Event>> pool_;

  // The communicator's state once it is no longer ncclInProgress, or ncclInProgress when the
  // timeout passed first.
  ncclResult_t settled_state() {
    WaitBound bound(timeout_s.load());
    Backoff pause = poll_pause();
    for (;;) {
      ncclResult_t state = ncclInProgress;
      const ncclResult_t result = ncclCommGetAsyncError(comm, &state);
      if (result != ncclSuccess) return result;
      if (state != ncclInProgress || bound.passed()) return state;
      pause.pause();
    }
  }

  // ncclCommFinalize (flushes what is in flight, bounded by the timeout) and ncclCommDestroy;
  // aborts instead when finalizing fails or times out. Never throws.
  void shutdown() {
    ncclResult_t result = ncclCommFinalize(comm);
    if (result == ncclSuccess || result == ncclInProgress) result = settled_state();
    if (result == ncclSuccess) {
      result = ncclCommDestroy(comm);
      comm = nullptr;
      if (result != ncclSuccess)
        spdlog::error("ncclCommDestroy failed on rank {}: {}", rank, ncclGetErrorString(result));
      return;
    }
    abort(fmt::format("finalizing the NCCL communicator on rank {} failed or timed out: {}", rank,
                      ncclGetErrorString(result)));
    spdlog::error("{}", broken);
  }
};

// The events of a device exchange on the communication stream, in order: its start (after the
// producer), the packs done, the grouped transfer done, the unpacks done (completion).
struct ExchangeEvents {
  PooledEvent started, packed, transferred, done;
};

void EventReturn::operator()(cuda::Event* event) const {
  state->give_back(event);
}

// A device exchange in flight.
class NcclWork : public Work {
 public:
  NcclWork(std::shared_ptr<NcclState> state, ExchangeEvents events, std::vector<bool> receives,
           int tag)
      : state_(std::move(state)),
        events_(std::move(events)),
        receives_(std::move(receives)),
        what_(fmt::format("halo exchange (tag {})", tag)) {}

  ~NcclWork() override {
    if (!complete_ && state_->comm != nullptr) {
      try {
        cuda::DeviceGuard guard(state_->device, where(state_->rank, state_->device));
        if (!state_->poll(events_.done->get(), what_)) {
          // While an error unwinds (reported on its own) this is its consequence, not news.
          spdlog::log(std::uncaught_exceptions() > 0 ? spdlog::level::debug : spdlog::level::warn,
                      "{} on rank {} destroyed before completion; waiting for it", what_,
                      state_->rank);
          state_->wait(events_.done->get(), what_);
        }
      } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
      }
    }
  }

  bool test() override {
    if (!complete_) complete_ = state_->poll(events_.done->get(), what_);
    return complete_;
  }

  void wait() override {
    if (complete_) return;
    state_->wait(events_.done->get(), what_);
    complete_ = true;
  }

  // Also records when `stream` got here (ExchangeTiming::needed_s).
  void wait_on_stream(void* stream) override {
    state_->check_usable(what_);
    cuda::DeviceGuard guard(state_->device, where(state_->rank, state_->device));
    const auto consumer = static_cast<cudaStream_t>(stream);
    needed_ = state_->record(consumer != nullptr ? consumer : cudaStreamLegacy);
    ADAQP_CUDA_CHECK_AT(cudaStreamWaitEvent(consumer, events_.done->get(), 0),
                        where(state_->rank, state_->device));
  }

  // Device times mapped onto the host's steady clock through a reference event recorded now on
  // an idle stream and awaited: its host time is known to the polling pause (at most 100 us).
  ExchangeTiming timing() override {
    wait();
    cuda::DeviceGuard guard(state_->device, where(state_->rank, state_->device));
    // The consumer stream may still be short of wait_on_stream's point.
    if (needed_ != nullptr) state_->wait(needed_->get(), what_);
    const PooledEvent pooled_ref = state_->record(state_->clock_stream.get());
    const cuda::Event& ref = *pooled_ref;
    state_->wait(ref.get(), what_);
    const double ref_s = steady_now_s();
    ExchangeTiming t;
    t.started_s = ref_s - state_->elapsed_s(*events_.started, ref);
    t.completed_s = ref_s - state_->elapsed_s(*events_.done, ref);
    t.codec_s = state_->elapsed_s(*events_.started, *events_.packed) +
                state_->elapsed_s(*events_.transferred, *events_.done);
    // One grouped transfer completes as a whole, so every peer's rows count as arrived at its end
    // (a time per peer would need a group per peer, which serialises NCCL's transfers).
    const double arrived = ref_s - state_->elapsed_s(*events_.transferred, ref);
    for (bool r : receives_) t.arrival_s.push_back(r ? arrived : -1.0);
    if (needed_ != nullptr) t.needed_s = ref_s - state_->elapsed_s(*needed_, ref);
    return t;
  }

 private:
  std::shared_ptr<NcclState> state_;
  ExchangeEvents events_;
  std::vector<bool> receives_;  // per rank: a block arrives from it
  PooledEvent needed_;          // recorded on the consumer stream by wait_on_stream
  std::string what_;
  bool complete_ = false;
};

template <typename T>
struct NcclType;
template <>
struct NcclType<float> {
  static constexpr ncclDataType_t value = ncclFloat32;
};
template <>
struct NcclType<double> {
  static constexpr ncclDataType_t value = ncclFloat64;
};
template <>
struct NcclType<int64_t> {
  static constexpr ncclDataType_t value = ncclInt64;
};

}  // namespace

struct NcclCommunicator::Impl {
  std::unique_ptr<MpiCommunicator> mpi;
  std::shared_ptr<NcclState> state;

  // True for device (or managed) memory of this device, false for host memory; InvariantError for
  // another device's memory.
  bool on_device(const void* ptr, const char* what) const {
    cudaPointerAttributes attributes{};
    ADAQP_CUDA_CHECK_AT(cudaPointerGetAttributes(&attributes, ptr),
                        where(state->rank, state->device));
    if (attributes.type == cudaMemoryTypeManaged) return true;
    if (attributes.type != cudaMemoryTypeDevice) return false;
    ADAQP_CHECK_EQ(
        attributes.device, state->device,
        fmt::format("{}: the buffer's device, the communicator's (rank {})", what, state->rank));
    return true;
  }

  // Enqueues `op` on the communication stream, after the work enqueued so far on the legacy
  // default stream (libtorch's compute stream, which produced the data), and waits for it, bounded
  // by the timeout.
  template <typename Op>
  void blocking(const char* name, Op&& op) {
    state->check_usable(name);
    cuda::DeviceGuard guard(state->device, where(state->rank, state->device));
    state->wait_for(nullptr);
    op(state->stream.get());
    const PooledEvent done = state->record();
    state->wait(done->get(), name);
  }

  // NCCL for device memory; `on_host(data, n)` (the MPI collective) for host memory.
  template <typename T, typename HostOp>
  void allreduce(T* data, size_t n, ncclRedOp_t op, const char* name, HostOp&& on_host) {
    ADAQP_CHECK(n == 0 || data != nullptr, fmt::format("{}: null data for {} values", name, n));
    if (n == 0) return;
    if (!on_device(data, name)) {
      on_host(data, n);
      return;
    }
    blocking(name, [&](cudaStream_t stream) {
      state->nccl(ncclAllReduce(data, data, n, NcclType<T>::value, op, state->comm, stream),
                  "ncclAllReduce");
    });
  }
};

NcclCommunicator::NcclCommunicator(MPI_Comm comm, const NcclCommunicatorOptions& options)
    : impl_(std::make_unique<Impl>()) {
  check_comm_timeout(options.timeout_s);
  MpiCommunicatorOptions mpi_options;
  mpi_options.timeout_s = options.timeout_s;
  impl_->mpi = std::make_unique<MpiCommunicator>(comm, mpi_options);
  const int rank = impl_->mpi->rank();
  const int size = impl_->mpi->size();

  // Local set-up, then agreement, so that one rank's failure never leaves the others waiting.
  std::exception_ptr local_error;
  ncclUniqueId id{};
  try {
    int devices = 0;
    const cudaError_t count = cudaGetDeviceCount(&devices);
    if (count != cudaSuccess) devices = 0;
    if (options.device < 0 || options.device >= devices)
      throw ConfigError(fmt::format("CUDA device {} on rank {} outside the {} visible device(s)",
                                    options.device, rank, devices));
    // Set for good, not guarded: restoring the previous device (0 when none was chosen) would
    // give device 0 a context on every rank of a multi-GPU host.
    ADAQP_CUDA_CHECK_AT(cudaSetDevice(options.device), where(rank, options.device));
    impl_->state = std::make_shared<NcclState>(rank, size, options.device, options.timeout_s);
    if (rank == 0) {
      const ncclResult_t result = ncclGetUniqueId(&id);
      if (result != ncclSuccess)
        throw CommError(fmt::format("ncclGetUniqueId failed on rank 0: {} ({})",
                                    ncclGetErrorString(result), ncclGetLastError(nullptr)));
    }
  } catch (const std::exception&) {
    local_error = std::current_exception();
  }
  int first_failed = -1;
  if (any_rank_failed(*impl_->mpi, local_error != nullptr, &first_failed)) {
    if (local_error) std::rethrow_exception(local_error);
    throw CommError(fmt::format("NCCL communicator set-up on rank {}: aborting: rank {} failed",
                                rank, first_failed));
  }
  impl_->mpi->broadcast(&id, sizeof(id), 0);
  impl_->state->init(id);
  spdlog::debug("rank {}: NCCL communicator of {} ranks on device {}", rank, size, options.device);
}

NcclCommunicator::~NcclCommunicator() = default;

int NcclCommunicator::rank() const {
  return impl_->mpi->rank();
}

int NcclCommunicator::size() const {
  return impl_->mpi->size();
}

int NcclCommunicator::device() const {
  return impl_->state->device;
}

void* NcclCommunicator::stream() const {
  return impl_->state->stream.get();
}

void NcclCommunicator::stream_wait(void* producer) {
  NcclState& s = *impl_->state;
  cuda::DeviceGuard guard(s.device, where(s.rank, s.device));
  s.wait_for(static_cast<cudaStream_t>(producer));
}

std::unique_ptr<Work> NcclCommunicator::exchange(const ExchangeBuffers& buffers,
                                                 const ExchangeOptions& options) {
  NcclState& s = *impl_->state;
  check_exchange_buffers(buffers, s.size);
  const auto n = static_cast<size_t>(s.size);
  bool host = false, device = false;
  for (size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == s.rank) continue;
    if (buffers.send_bytes[r] > 0) {
      (impl_->on_device(buffers.send[r], "exchange") ? device : host) = true;
    }
    if (buffers.recv_bytes[r] > 0) {
      (impl_->on_device(buffers.recv[r], "exchange") ? device : host) = true;
    }
  }
  ADAQP_CHECK(!(host && device),
              fmt::format("exchange (tag {}) on rank {} mixes host and device buffers", options.tag,
                          s.rank));
  if (host) return impl_->mpi->exchange(buffers, options);

  const std::string what = fmt::format("halo exchange (tag {})", options.tag);
  s.check_usable(what);
  cuda::DeviceGuard guard(s.device, where(s.rank, s.device));
  cudaStream_t stream = s.stream.get();
  s.wait_for(static_cast<cudaStream_t>(options.producer_stream));
  ExchangeEvents events;
  events.started = s.record();
  // Peers in the order rank+1, rank+2, ... as in the MPI transport.
  for (int k = 1; k < s.size; ++k) {
    const int peer = (s.rank + k) % s.size;
    if (buffers.send_bytes[peer] == 0 || !options.hooks.pack) continue;
    const size_t pieces = buffers.piece_ends(peer, true).size();
    for (size_t piece = 0; piece < pieces; ++piece) {
      options.hooks.pack(peer, static_cast<int>(piece), stream);
    }
  }
  events.packed = s.record();
  s.nccl(ncclGroupStart(), "ncclGroupStart");
  // Inside the group a failed call is only remembered: the group is closed before the
  // communicator may be aborted, so that no queued operation outlives it.
  ncclResult_t queued = ncclSuccess;
  const char* failed_call = "";
  auto queue = [&](ncclResult_t result, const char* call) {
    if (queued != ncclSuccess || result == ncclSuccess) return;
    queued = result;
    failed_call = call;
  };
  for (int k = 1; k < s.size; ++k) {
    const int peer = (s.rank + k) % s.size;
    if (buffers.recv_bytes[peer] > 0)
      queue(ncclRecv(buffers.recv[peer], buffers.recv_bytes[peer], ncclUint8, peer, s.comm, stream),
            "ncclRecv");
    if (buffers.send_bytes[peer] > 0)
      queue(ncclSend(buffers.send[peer], buffers.send_bytes[peer], ncclUint8, peer, s.comm, stream),
            "ncclSend");
  }
  const ncclResult_t ended = ncclGroupEnd();
  if (queued != ncclSuccess) s.nccl(queued, failed_call);
  s.nccl(ended, "ncclGroupEnd");
  events.transferred = s.record();
  std::vector<bool> receives(n, false);
  try {
    for (int peer = 0; peer < s.size; ++peer) {
      if (peer == s.rank || buffers.recv_bytes[peer] == 0) continue;
      receives[peer] = true;
      if (!options.hooks.unpack) continue;
      const size_t pieces = buffers.piece_ends(peer, false).size();
      for (size_t piece = 0; piece < pieces; ++piece) {
        options.hooks.unpack(peer, static_cast<int>(piece), stream);
      }
    }
  } catch (const std::exception& e) {
    // The transfers are queued and NCCL cannot cancel them; no Work tracks them: the communicator
    // goes, as on a timeout, before their buffers can.
    s.abort(fmt::format("halo exchange (tag {}): unpacking failed on rank {}: {}", options.tag,
                        s.rank, e.what()));
    throw;
  }
  events.done = s.record();
  return std::make_unique<NcclWork>(impl_->state, std::move(events), std::move(receives),
                                    options.tag);
}

void NcclCommunicator::allreduce_sum(float* data, size_t n) {
  impl_->allreduce(data, n, ncclSum, "allreduce_sum(float)",
                   [this](float* host, size_t count) { impl_->mpi->allreduce_sum(host, count); });
}

void NcclCommunicator::allreduce_sum(double* data, size_t n) {
  impl_->allreduce(data, n, ncclSum, "allreduce_sum(double)",
                   [this](double* host, size_t count) { impl_->mpi->allreduce_sum(host, count); });
}

void NcclCommunicator::allreduce_sum(int64_t* data, size_t n) {
  impl_->allreduce(data, n, ncclSum, "allreduce_sum(int64)",
                   [this](int64_t* host, size_t count) { impl_->mpi->allreduce_sum(host, count); });
}

void NcclCommunicator::allreduce_max(double* data, size_t n) {
  impl_->allreduce(data, n, ncclMax, "allreduce_max(double)",
                   [this](double* host, size_t count) { impl_->mpi->allreduce_max(host, count); });
}

void NcclCommunicator::broadcast(void* data, size_t bytes, int root) {
  NcclState& s = *impl_->state;
  ADAQP_CHECK(root >= 0 && root < s.size,
              fmt::format("broadcast root {} outside [0, {})", root, s.size));
  ADAQP_CHECK(bytes == 0 || data != nullptr,
              fmt::format("broadcast: null data for {} bytes", bytes));
  if (bytes == 0) return;
  if (!impl_->on_device(data, "broadcast")) {
    impl_->mpi->broadcast(data, bytes, root);
    return;
  }
  impl_->blocking("broadcast", [&](cudaStream_t stream) {
    s.nccl(ncclBroadcast(data, data, bytes, ncclUint8, root, s.comm, stream), "ncclBroadcast");
  });
}

void NcclCommunicator::allgather(const void* in, void* out, size_t bytes) {
  NcclState& s = *impl_->state;
  ADAQP_CHECK(bytes == 0 || (in != nullptr && out != nullptr),
              fmt::format("allgather: null buffer for {} bytes", bytes));
  if (bytes == 0) return;
  const bool device_in = impl_->on_device(in, "allgather");
  ADAQP_CHECK(device_in == impl_->on_device(out, "allgather"),
              "allgather: `in` and `out` must both be device memory or both host memory");
  if (!device_in) {
    impl_->mpi->allgather(in, out, bytes);
    return;
  }
  impl_->blocking("allgather", [&](cudaStream_t stream) {
    s.nccl(ncclAllGather(in, out, bytes, ncclUint8, s.comm, stream), "ncclAllGather");
  });
}

void NcclCommunicator::barrier() {
  NcclState& s = *impl_->state;
  void* word = s.barrier_word.get();
  impl_->blocking("barrier", [&](cudaStream_t stream) {
    s.nccl(ncclAllReduce(word, word, 1, ncclInt32, ncclSum, s.comm, stream), "ncclAllReduce");
  });
}

void NcclCommunicator::set_timeout(double seconds) {
  check_comm_timeout(seconds);
  impl_->mpi->set_timeout(seconds);
  impl_->state->timeout_s.store(seconds);
}

double NcclCommunicator::timeout() const {
  return impl_->state->timeout_s.load();
}

std::unique_ptr<Communicator> NcclCommunicator::host_duplicate() {
  return impl_->mpi->host_duplicate();
}

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm comm, int device, double timeout_s) {
  NcclCommunicatorOptions options;
  options.device = device;
  options.timeout_s = timeout_s;
  return std::make_unique<NcclCommunicator>(comm, options);
}

}  // namespace adaqp
