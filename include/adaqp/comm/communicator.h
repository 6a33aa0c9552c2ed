// The communicator every worker uses: one abstract interface, one subclass per transport (MPI on
// CPUs, NCCL on GPUs). A halo exchange is ONE grouped call per exchange: every send and receive of
// the exchange together, with per-peer pack and unpack hooks that the transport runs around the
// transfers. NCCL matches operations by their order, not by tags, so an exchange split into
// several calls per peer, issued in a different order on different ranks, would deadlock there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace adaqp {

// One exchange: send[r] (send_bytes[r] bytes) goes to rank r, recv[r] (recv_bytes[r] bytes)
// arrives from rank r. Entries of zero bytes (and the own rank) are skipped. The buffers must stay
// alive and untouched (but for the hooks) until the exchange's Work has completed. Where they live
// is the transport's contract: host memory for MpiCommunicator; device memory of the
// communicator's GPU, or host memory for small host-side exchanges, for NcclCommunicator
// (nccl_communicator.h).
//
// A block may travel in pieces: send_pieces[r] (recv_pieces[r]) lists the end offsets of the
// pieces of send[r] (recv[r]), ascending, each piece non-empty, the last = the block's bytes; empty
// (the default): one piece. The hooks then run per piece, so that a host transport sends a packed
// piece while the next is packed and unpacks a piece while later ones travel. Sender and receiver
// must cut a block alike.
struct ExchangeBuffers {
  std::vector<const void*> send;
  std::vector<size_t> send_bytes;
  std::vector<void*> recv;
  std::vector<size_t> recv_bytes;
  std::vector<std::vector<size_t>> send_pieces, recv_pieces;

  // `world` entries, all empty.
  static ExchangeBuffers none(int world);
  // The end offsets of the pieces of the block to (send) or from rank r: {bytes} when not cut.
  std::vector<size_t> piece_ends(int r, bool send) const;
};

// Per-piece steps of an exchange, run by the transport (either may be empty):
//   pack(r, k, stream):   writes piece k of send[r]; runs before that piece is sent to r;
//   unpack(r, k, stream): reads piece k of recv[r]; runs once that piece from r has arrived.
// Each runs once per piece (ExchangeBuffers::piece_ends), pieces in order, for every peer with a
// non-empty send (pack) or receive (unpack). A host transport calls them on the thread that drives
// the exchange (see ExchangeOptions::background), an unpack as soon as its piece has arrived, with
// stream = nullptr. A device transport calls them inside exchange(), where they enqueue device
// work on `stream`, the communication stream (a cudaStream_t): every pack before the grouped
// transfer, every unpack (peers in rank order) after it. A hook that throws fails the exchange:
// the exception reaches the caller from exchange() or from Work::wait().
struct ExchangeHooks {
  std::function<void(int peer, int piece, void* stream)> pack;
  std::function<void(int peer, int piece, void* stream)> unpack;
};

struct ExchangeOptions {
  ExchangeOptions(int tag = 0) : tag(tag) {}  // NOLINT: a plain exchange is named by its tag

  // Separates exchanges that may be in flight together (host transports), names the exchange in
  // errors; in [0, 32767].
  int tag = 0;
  ExchangeHooks hooks;
  // Host transports: drive the exchange (posting, testing, the hooks) on the communicator's
  // progress thread, so that it moves while the caller computes without calling the communicator
  // (Communicator::allows_progress_thread). Otherwise the caller drives it inside test()/wait().
  // Device transports progress by themselves and ignore it.
  bool background = false;
  // Device transports: the stream (a cudaStream_t; nullptr is the legacy default stream) whose
  // work so far produces what the pack hooks read; the exchange waits for it on the device.
  void* producer_stream = nullptr;
};

// Timestamps (steady clock, seconds, as steady_now_s()) and codec time of a completed exchange.
struct ExchangeTiming {
  double started_s = 0;    // the exchange began (device: its first work on the stream ran)
  double completed_s = 0;  // every transfer had completed and every unpack had run
  double codec_s = 0;      // time spent in the pack and unpack hooks
  // Per rank: when its block (its last piece) had arrived, before that piece's unpack; -1 for ranks
  // that sent nothing. A device transport's grouped transfer completes as a whole: every entry is
  // its end.
  std::vector<double> arrival_s;
  // Device transports: when the stream given to the last Work::wait_on_stream reached that call
  // (the work it ran meanwhile overlapped the exchange); -1 when unknown.
  double needed_s = -1;
};

// An exchange in flight.
class Work {
 public:
  virtual ~Work() = default;
  // True once every send, receive and hook has completed (never blocks).
  virtual bool test() = 0;
  // Blocks until completion. Throws CommError naming the peers still pending when the
  // communicator's timeout passes, or the peer whose transfer failed; rethrows a hook's exception.
  // After a timeout of a host transport's exchange driven by the caller the exchange is still in
  // flight: wait() may be called again, or destroying the Work cancels what is pending (logging a
  // warning); a background exchange that timed out stays failed (wait() rethrows). A transport
  // that cannot cancel a transfer (NCCL) aborts its communicator on the timeout instead and says
  // so in the CommError.
  virtual void wait() = 0;
  // Drives the exchange (test()) until it completes or `seconds` pass, whichever is first, and
  // returns whether it completed: a bound of the caller's own, shorter than the communicator's
  // timeout, that leaves the exchange in flight (wait() may follow). Polling, so that a host
  // transport times every block's arrival as it is seen (timing()). Rethrows what test() throws.
  bool wait_for(double seconds);
  // Makes work enqueued later on `stream` (a cudaStream_t) wait for the exchange without blocking
  // the host; a later wait() still bounds the exchange by the timeout. Host transports wait().
  virtual void wait_on_stream(void* stream) {
    (void)stream;
    wait();
  }
  // The exchange's timing; only after wait() has returned (a device transport may wait for the
  // stream here).
  virtual ExchangeTiming timing() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Starts an exchange. The caller must not call the communicator again before the Work of a
  // background exchange has completed.
  virtual std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                         const ExchangeOptions& options) = 0;

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

  // True when background exchanges run on a progress thread (ExchangeOptions::background); false
  // for transports whose exchanges move by themselves or that cannot be driven from another thread.
  virtual bool allows_progress_thread() const { return false; }
  // True for a device transport: exchanges may move GPU memory (NcclCommunicator).
  virtual bool device_memory() const { return false; }
  // Collective: a new communicator over the same ranks, for host-memory exchanges and collectives
  // on another thread while this one is in use (the adaptive scheme's background solve), or null
  // on every rank where the transport cannot run two threads at once (MPI without
  // MPI_THREAD_MULTIPLE, wrappers). Its timeout starts as this one's.
  virtual std::unique_ptr<Communicator> host_duplicate() { return nullptr; }
};

// ConfigError unless `seconds` is a valid bound on a communicator's waits: in (0, 1e6].
void check_comm_timeout(double seconds);

// For transports: InvariantError unless `buffers` has one entry per rank of `world`, a buffer
// wherever bytes > 0 and valid pieces (ExchangeBuffers).
void check_exchange_buffers(const ExchangeBuffers& buffers, int world);
// For transports: runs `hook` (if set) for piece `piece` of `peer`; returns the seconds it took
// (ExchangeTiming::codec_s sums them).
double run_hook(const std::function<void(int, int, void*)>& hook, int peer, int piece,
                void* stream);

// Start-up failure agreement: every rank calls this once with whether it failed locally; all get
// true if any rank failed, *first_failed (when given) is the lowest failing rank, or -1, and
// *failed (when given) how many ranks failed. Lets every rank exit non-zero together: the lowest
// failing rank reports its error, the others exit without a message of their own.
bool any_rank_failed(Communicator& comm, bool local_failed, int* first_failed = nullptr,
                     int* failed = nullptr);

// Rank 0's `text` on every rank (collective; the other ranks' argument is ignored).
std::string broadcast_text(Communicator& comm, std::string text);

// A start-up step: runs its argument on this rank, then agrees with every rank (any_rank_failed)
// and throws on every rank if any failed (on the lowest failing rank, its own error); so what
// follows a step starts once every rank has finished it. The CLI supplies it; collective start-up
// code runs its local work through it so that a failure on one rank never leaves the others
// waiting.
using CollectiveStep = std::function<void(const std::function<void()>&)>;

}  // namespace adaqp
