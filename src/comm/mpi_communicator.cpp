#include "adaqp/comm/mpi_communicator.h"

#include <fmt/format.h>
#include <omp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <thread>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/common/backoff.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/timeouts.h"
#include "adaqp/common/wait_bound.h"
#include "host_work.h"

namespace adaqp {
namespace {

// Outcome of progressing a set of requests.
struct Progress {
  bool done = false;       // every request has completed
  int code = MPI_SUCCESS;  // the first error met, if any
  int failed = -1;         // index of the request that failed; -1 when the MPI call itself did
  int received = -1;       // a receive that completed short: the bytes that came (code is set)
};

// Requests polled together; completed ones become MPI_REQUEST_NULL.
class RequestSet {
 public:
  RequestSet() = default;
  explicit RequestSet(std::vector<MPI_Request> requests)
      : requests_(std::move(requests)), expected_(requests_.size(), -1) {}

  // `expected`: the bytes a receive was posted for (a receive that completes with fewer fails:
  // MPI takes a shorter message into a larger buffer); -1 for any other request.
  void add(MPI_Request request, int expected = -1) {
    requests_.push_back(request);
    expected_.push_back(expected);
  }
  size_t size() const { return requests_.size(); }
  bool pending(size_t i) const { return requests_[i] != MPI_REQUEST_NULL; }
  MPI_Request& operator[](size_t i) { return requests_[i]; }
  std::vector<MPI_Request> take() { return std::move(requests_); }

  // True once every request has completed (no MPI call).
  bool completed() const {
    return std::none_of(requests_.begin(), requests_.end(),
                        [](MPI_Request r) { return r != MPI_REQUEST_NULL; });
  }

  // One progress step; never blocks.
  Progress test() {
    Progress progress;
    if (completed()) {
      progress.done = true;
      return progress;
    }
    indices_.resize(requests_.size());
    statuses_.resize(requests_.size());
    int count = 0;
    int code = MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count,
                            indices_.data(), statuses_.data());
    if (code == MPI_ERR_IN_STATUS) {
      for (int k = 0; k < count; ++k) {
        if (statuses_[k].MPI_ERROR != MPI_SUCCESS) {
          progress.code = statuses_[k].MPI_ERROR;
          progress.failed = indices_[k];
          return progress;
        }
      }
    }
    if (code != MPI_SUCCESS) {
      progress.code = code;
      return progress;
    }
    for (int k = 0; k < count; ++k) {
      const int expected = expected_[static_cast<size_t>(indices_[k])];
      int received = 0;
      if (expected < 0 || MPI_Get_count(&statuses_[k], MPI_BYTE, &received) != MPI_SUCCESS ||
          received == expected)
        continue;
      progress.code = MPI_ERR_TRUNCATE;
      progress.failed = indices_[k];
      progress.received = received;
      return progress;
    }
    progress.done = completed();
    return progress;
  }

  // Polls until every request completes, one fails, or timeout_s passes. A non-blocking
  // collective moves on only inside a poll (each round of its schedule, each rendezvous step of
  // TCP), so the pause is capped at 50 us: capped at 1 ms, the loss's and gradients' all-reduces
  // of a 3-layer GCN (136 KB) took 13 ms an epoch at 10 Gbit/s instead of 4.5, 24 instead of 7.5
  // at 300 Mbit/s (benchmarks/results/collective-poll-2026-12-02).
  Progress wait(double timeout_s) {
    WaitBound bound(timeout_s);
    Backoff backoff(64, std::chrono::microseconds(10), std::chrono::microseconds(50));
    for (;;) {
      Progress progress = test();
      if (progress.done || progress.code != MPI_SUCCESS) return progress;
      if (bound.passed()) return progress;
      backoff.pause();
    }
  }

 private:
  std::vector<MPI_Request> requests_;
  std::vector<int> expected_;  // per request: add()'s `expected`
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

// "[0, 2]": the distinct peers, sorted.
std::string peer_list(std::vector<int> peers) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return fmt::format("[{}]", fmt::join(peers, ", "));
}

// What an exchange needs of its communicator; copied, so that a Work may outlive it.
struct MpiLink {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int world = 1;
  size_t max_chunk_bytes = 1;
  std::shared_ptr<const std::atomic<double>> timeout_s;
};

// One exchange in flight: a request per message chunk, the transfer each belongs to, the hooks.
// Its steps run on the caller (test/wait) or on the progress thread (background), never both.
class MpiWork : public HostWork {
 public:
  MpiWork(MpiLink link, const ExchangeBuffers& buffers, ExchangeOptions options)
      : HostWork(link.world),
        link_(std::move(link)),
        buffers_(buffers),
        options_(std::move(options)),
        recv_requests_(static_cast<size_t>(link_.world)),
        unpacked_(static_cast<size_t>(link_.world), 0) {}

  ~MpiWork() override {
    if (thread_ != nullptr && !finished_) thread_->wait();  // the task never throws
    if (requests_.completed()) return;
    int finalized = 0;
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
    if (requests_.test().done) return;
    // While an error unwinds (reported on its own) this is its consequence, not news.
    spdlog::log(std::uncaught_exceptions() > 0 ? spdlog::level::debug : spdlog::level::warn,
                "halo exchange (tag {}) on rank {} destroyed before completion; cancelling {}",
                options_.tag, link_.rank, pending());
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (!requests_.pending(i)) continue;
      int code = MPI_Cancel(&requests_[i]);
      if (code != MPI_SUCCESS)
        spdlog::error("MPI_Cancel failed on rank {} (peer {}): {}", link_.rank, transfers_[i].peer,
                      mpi_error_string(code));
    }
    const double timeout_s = std::min(link_.timeout_s->load(), kCancelWaitS);
    if (requests_.wait(timeout_s).done) return;
    spdlog::log(std::uncaught_exceptions() > 0 ? spdlog::level::debug : spdlog::level::err,
                "halo exchange (tag {}) on rank {}: {} still pending after cancelling (waited up "
                "to {} s); freeing the requests",
                options_.tag, link_.rank, pending(), timeout_s);
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (!requests_.pending(i)) continue;
      int code = MPI_Request_free(&requests_[i]);
      if (code != MPI_SUCCESS)
        spdlog::error("MPI_Request_free failed on rank {} (peer {}): {}", link_.rank,
                      transfers_[i].peer, mpi_error_string(code));
    }
  }

  // Posts every receive, then packs and sends each peer's block (peers rank+1, rank+2, ..., so
  // that not every rank talks to rank 0 first), testing the transfers already posted between two
  // blocks. Unpacking waits until every send is posted: a failing unpack then leaves no peer
  // waiting for a block that was never sent.
  void start() {
    timing_.started_s = steady_now_s();
    for (int k = 1; k < link_.world; ++k) {
      const int peer = (link_.rank + k) % link_.world;
      if (buffers_.recv_bytes[peer] == 0) continue;
      size_t begin = 0;
      for (size_t end : buffers_.piece_ends(peer, false)) {
        recv_requests_[peer].emplace_back();
        post(peer, false, begin, end);
        begin = end;
      }
    }
    for (int k = 1; k < link_.world; ++k) {
      const int peer = (link_.rank + k) % link_.world;
      if (buffers_.send_bytes[peer] == 0) continue;
      size_t begin = 0;
      int piece = 0;
      for (size_t end : buffers_.piece_ends(peer, true)) {
        timing_.codec_s += run_hook(options_.hooks.pack, peer, piece++, nullptr);
        post(peer, true, begin, end);
        begin = end;
        checked(requests_.test());
      }
    }
    all_posted_ = true;
  }

  // Runs start() and drive() on `thread`; test() and wait() then report its outcome.
  void run_on(std::shared_ptr<ProgressThread> thread) {
    thread_ = std::move(thread);
    thread_->submit([this] {
      try {
        // The hooks (packing, unpacking) must not compete with the caller's compute threads.
        omp_set_num_threads(1);
        start();
        drive();
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }

  bool test() override {
    if (thread_ == nullptr) return progress();
    if (!finished_ && !thread_->idle()) return false;
    finish_background();
    return true;
  }

  void wait() override {
    if (thread_ == nullptr) {
      drive();
    } else {
      finish_background();
    }
  }

 private:
  struct Transfer {
    int peer;
    bool send;
    int bytes;  // of this chunk
  };

  // Posts bytes [begin, end) of the block to or from `peer`, in chunks of at most max_chunk_bytes;
  // a receive's requests join the peer's last piece (recv_requests_).
  void post(int peer, bool send, size_t begin, size_t end) {
    char* data = send ? static_cast<char*>(const_cast<void*>(buffers_.send[peer]))
                      : static_cast<char*>(buffers_.recv[peer]);
    for (size_t offset = begin; offset < end; offset += link_.max_chunk_bytes) {
      const int count = static_cast<int>(std::min(link_.max_chunk_bytes, end - offset));
      MPI_Request request;
      if (send) {
        check_mpi(
            MPI_Isend(data + offset, count, MPI_BYTE, peer, options_.tag, link_.comm, &request),
            "MPI_Isend", link_.rank, peer);
      } else {
        check_mpi(
            MPI_Irecv(data + offset, count, MPI_BYTE, peer, options_.tag, link_.comm, &request),
            "MPI_Irecv", link_.rank, peer);
        recv_requests_[peer].back().push_back(requests_.size());
      }
      requests_.add(request, send ? -1 : count);
      transfers_.push_back({peer, send, count});
    }
  }

  // One progress step: tests every request and unpacks, in order, the pieces that have arrived.
  // True once everything has completed.
  bool progress() {
    checked(requests_.test());
    for (int peer = 0; peer < link_.world; ++peer) {
      const std::vector<std::vector<size_t>>& pieces = recv_requests_[peer];
      while (unpacked_[peer] < pieces.size()) {
        const std::vector<size_t>& chunks = pieces[unpacked_[peer]];
        if (std::any_of(chunks.begin(), chunks.end(),
                        [&](size_t i) { return requests_.pending(i); }))
          break;
        const int piece = static_cast<int>(unpacked_[peer]++);
        if (unpacked_[peer] == pieces.size()) timing_.arrival_s[peer] = steady_now_s();
        timing_.codec_s += run_hook(options_.hooks.unpack, peer, piece, nullptr);
      }
    }
    const bool done = all_posted_ && requests_.completed();
    if (done && timing_.completed_s == 0) timing_.completed_s = steady_now_s();
    return done;
  }

  // Progresses until everything has completed; CommError after the timeout.
  void drive() {
    const double timeout_s = link_.timeout_s->load();
    WaitBound bound(timeout_s);
    // Short sleeps: keep a fast link busy while leaving the cores to the computation.
    Backoff backoff(32, std::chrono::microseconds(5), std::chrono::microseconds(200));
    while (!progress()) {
      if (bound.passed())
        throw CommError(fmt::format(
            "halo exchange (tag {}) timed out after {} s on rank {}; still waiting for: {}",
            options_.tag, timeout_s, link_.rank, pending()));
      backoff.pause();
    }
  }

  void finish_background() {
    if (!finished_) {
      thread_->wait();
      finished_ = true;
    }
    if (error_) std::rethrow_exception(error_);
  }

  void checked(const Progress& progress) const {
    if (progress.code == MPI_SUCCESS) return;
    if (progress.failed < 0)
      throw CommError(fmt::format("halo exchange (tag {}): MPI_Testsome failed on rank {}: {}",
                                  options_.tag, link_.rank, mpi_error_string(progress.code)));
    const Transfer& t = transfers_[static_cast<size_t>(progress.failed)];
    if (progress.received >= 0) {
      throw CommError(fmt::format(
          "halo exchange (tag {}): rank {} received {} bytes from peer {} where it expected {}: "
          "the two ends disagree on the exchange's size",
          options_.tag, link_.rank, progress.received, t.peer, t.bytes));
    }
    throw CommError(fmt::format("halo exchange (tag {}): {} peer {} failed on rank {}: {}",
                                options_.tag, t.send ? "send to" : "receive from", t.peer,
                                link_.rank, mpi_error_string(progress.code)));
  }

  // "recv from [..], send to [..]" over the transfers not yet completed (or not yet posted).
  std::string pending() const {
    std::vector<int> recv_from, send_to;
    for (size_t i = 0; i < transfers_.size(); ++i) {
      if (requests_.pending(i))
        (transfers_[i].send ? send_to : recv_from).push_back(transfers_[i].peer);
    }
    if (!all_posted_) {
      for (int r = 0; r < link_.world; ++r) {
        if (r != link_.rank && buffers_.send_bytes[r] > 0) send_to.push_back(r);
      }
    }
    return fmt::format("recv from {}, send to {}", peer_list(recv_from), peer_list(send_to));
  }

  MpiLink link_;
  ExchangeBuffers buffers_;
  ExchangeOptions options_;
  RequestSet requests_;
  std::vector<Transfer> transfers_;
  // Per peer and piece: the requests of its receive chunks; the pieces unpacked so far.
  std::vector<std::vector<std::vector<size_t>>> recv_requests_;
  std::vector<size_t> unpacked_;
  bool all_posted_ = false;
  std::shared_ptr<ProgressThread> thread_;  // background exchanges
  bool finished_ = false;                   // the background task has been waited for
  std::exception_ptr error_;                // what the background task threw
};

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, const MpiCommunicatorOptions& options)
    : max_chunk_bytes_(options.max_chunk_bytes),
      timeout_s_(std::make_shared<std::atomic<double>>(options.timeout_s)) {
  check_comm_timeout(options.timeout_s);
  ADAQP_CHECK(max_chunk_bytes_ >= 1 && max_chunk_bytes_ <= static_cast<size_t>(INT_MAX),
              fmt::format("max_chunk_bytes = {}", max_chunk_bytes_));
  check_mpi(MPI_Comm_rank(comm, &rank_), "MPI_Comm_rank", -1);
  check_mpi(MPI_Comm_size(comm, &size_), "MPI_Comm_size", rank_);
  // Collective: a rank that never joins (stalled, or stopped) must not hold the others forever.
  // MPI may write the new handle only when the duplicate completes: on a timeout the handle stays
  // allocated for it, the request pending (the job ends on that error).
  auto handle = std::make_unique<MPI_Comm>(MPI_COMM_NULL);
  std::vector<MPI_Request> dup(1);
  check_mpi(MPI_Comm_idup(comm, handle.get(), dup.data()), "MPI_Comm_idup", rank_);
  RequestSet duplicated(std::move(dup));
  const Progress progress = duplicated.wait(options.timeout_s);
  if (progress.code != MPI_SUCCESS) check_mpi(progress.code, "MPI_Comm_idup", rank_);
  if (progress.done) {
    comm_ = *handle;
  } else {
    static_cast<void>(handle.release());
    throw CommError(fmt::format(
        "duplicating the communicator timed out after {} s on rank {} (a peer stalled, died, or "
        "is busy for longer than communication.timeout_s)",
        options.timeout_s, rank_));
  }
  try {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", rank_);
    int* tag_ub = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found), "MPI_Comm_get_attr", rank_);
    if (found) tag_ub_ = *tag_ub;
    int provided = MPI_THREAD_SINGLE;
    check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread", rank_);
    serialized_ = provided >= MPI_THREAD_SERIALIZED;
    multiple_ = provided == MPI_THREAD_MULTIPLE;
  } catch (...) {
    MPI_Comm_free(&comm_);
    throw;
  }
}

MpiCommunicator::~MpiCommunicator() {
  // A background exchange still running posts on comm_: let it end first (bounded by the timeout).
  if (thread_ != nullptr) thread_->wait();
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
  if (!stale_.empty()) {
    RequestSet stale(std::move(stale_));
    if (!stale.wait(timeout()).done)
      spdlog::error("rank {}: a timed-out collective is still pending at communicator destruction",
                    rank_);
  }
  int code = MPI_Comm_free(&comm_);
  if (code != MPI_SUCCESS)
    spdlog::error("MPI_Comm_free failed on rank {}: {}", rank_, mpi_error_string(code));
}

std::unique_ptr<Work> MpiCommunicator::exchange(const ExchangeBuffers& buffers,
                                                const ExchangeOptions& options) {
  check_exchange_buffers(buffers, size_);
  ADAQP_CHECK(options.tag >= 0 && options.tag <= tag_ub_,
              fmt::format("exchange tag {} outside [0, {}]", options.tag, tag_ub_));
  auto work = std::make_unique<MpiWork>(MpiLink{comm_, rank_, size_, max_chunk_bytes_, timeout_s_},
                                        buffers, options);
  if (options.background && serialized_) {
    if (thread_ == nullptr) thread_ = std::make_shared<ProgressThread>();
    work->run_on(thread_);
  } else {
    work->start();
  }
  return work;
}

template <typename T>
void MpiCommunicator::allreduce(T* data, size_t n, MPI_Datatype type, MPI_Op op, const char* name) {
  check_usable(name);
  ADAQP_CHECK(n == 0 || data != nullptr, fmt::format("{}: null data for {} values", name, n));
  const size_t chunk = std::max<size_t>(1, max_chunk_bytes_ / sizeof(T));
  std::vector<MPI_Request> requests;
  for (size_t offset = 0; offset < n; offset += chunk) {
    MPI_Request request;
    int code =
        MPI_Iallreduce(MPI_IN_PLACE, data + offset, static_cast<int>(std::min(chunk, n - offset)),
                       type, op, comm_, &request);
    if (code != MPI_SUCCESS) abandon_collective(requests, name, code);
    requests.push_back(request);
  }
  finish_collective(requests, name);
}

void MpiCommunicator::allreduce_sum(float* data, size_t n) {
  allreduce(data, n, MPI_FLOAT, MPI_SUM, "allreduce_sum(float)");
}

void MpiCommunicator::allreduce_sum(double* data, size_t n) {
  allreduce(data, n, MPI_DOUBLE, MPI_SUM, "allreduce_sum(double)");
}

void MpiCommunicator::allreduce_sum(int64_t* data, size_t n) {
  allreduce(data, n, MPI_INT64_T, MPI_SUM, "allreduce_sum(int64)");
}

void MpiCommunicator::allreduce_max(double* data, size_t n) {
  allreduce(data, n, MPI_DOUBLE, MPI_MAX, "allreduce_max(double)");
}

void MpiCommunicator::broadcast(void* data, size_t bytes, int root) {
  check_usable("broadcast");
  ADAQP_CHECK(root >= 0 && root < size_,
              fmt::format("broadcast root {} outside [0, {})", root, size_));
  ADAQP_CHECK(bytes == 0 || data != nullptr,
              fmt::format("broadcast: null data for {} bytes", bytes));
  std::vector<MPI_Request> requests;
  for (size_t offset = 0; offset < bytes; offset += max_chunk_bytes_) {
    MPI_Request request;
    int code = MPI_Ibcast(static_cast<char*>(data) + offset,
                          static_cast<int>(std::min(max_chunk_bytes_, bytes - offset)), MPI_BYTE,
                          root, comm_, &request);
    if (code != MPI_SUCCESS) abandon_collective(requests, "broadcast", code);
    requests.push_back(request);
  }
  finish_collective(requests, "broadcast");
}

void MpiCommunicator::allgather(const void* in, void* out, size_t bytes) {
  check_usable("allgather");
  ADAQP_CHECK_LE(bytes, max_chunk_bytes_, "allgather bytes per rank, the message limit");
  ADAQP_CHECK(bytes == 0 || (in != nullptr && out != nullptr),
              fmt::format("allgather: null buffer for {} bytes", bytes));
  if (bytes == 0) return;
  std::vector<MPI_Request> requests(1);
  int code = MPI_Iallgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes),
                            MPI_BYTE, comm_, &requests[0]);
  if (code != MPI_SUCCESS) abandon_collective({}, "allgather", code);
  finish_collective(requests, "allgather");
}

void MpiCommunicator::barrier() {
  check_usable("barrier");
  std::vector<MPI_Request> requests(1);
  int code = MPI_Ibarrier(comm_, &requests[0]);
  if (code != MPI_SUCCESS) abandon_collective({}, "barrier", code);
  finish_collective(requests, "barrier");
}

void MpiCommunicator::finish_collective(std::vector<MPI_Request>& requests, const char* name) {
  RequestSet set(std::move(requests));
  double timeout_s = timeout();
  Progress progress = set.wait(timeout_s);
  if (progress.done) return;
  if (progress.code != MPI_SUCCESS) abandon_collective(set.take(), name, progress.code);
  broken_ = fmt::format(
      "{} timed out after {} s on rank {} (a peer stalled, died, or is busy for longer than "
      "communication.timeout_s)",
      name, timeout_s, rank_);
  std::vector<MPI_Request> pending = set.take();
  stale_.insert(stale_.end(), pending.begin(), pending.end());
  throw CommError(broken_);
}

void MpiCommunicator::abandon_collective(std::vector<MPI_Request> posted, const char* name,
                                         int code) {
  broken_ = fmt::format("{} failed on rank {}: {}", name, rank_, mpi_error_string(code));
  for (MPI_Request request : posted) {
    if (request != MPI_REQUEST_NULL) stale_.push_back(request);
  }
  throw CommError(broken_);
}

void MpiCommunicator::check_usable(const char* name) const {
  if (!broken_.empty())
    throw CommError(fmt::format("{} on rank {}: communicator unusable after an earlier failure: {}",
                                name, rank_, broken_));
}

void MpiCommunicator::set_timeout(double seconds) {
  check_comm_timeout(seconds);
  timeout_s_->store(seconds);
}

double MpiCommunicator::timeout() const {
  return timeout_s_->load();
}

std::unique_ptr<Communicator> MpiCommunicator::host_duplicate() {
  if (!multiple_) return nullptr;
  MpiCommunicatorOptions options;
  options.timeout_s = timeout();
  options.max_chunk_bytes = max_chunk_bytes_;
  return std::make_unique<MpiCommunicator>(comm_, options);
}

std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm comm, double timeout_s) {
  MpiCommunicatorOptions options;
  options.timeout_s = timeout_s;
  return std::make_unique<MpiCommunicator>(comm, options);
}

}  // namespace adaqp
