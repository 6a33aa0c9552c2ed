#include "adaqp/comm/communicator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <thread>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/wait_bound.h"

namespace adaqp {

void check_comm_timeout(double seconds) {
  constexpr double kMaxTimeoutS = 1e6;
  if (!(seconds > 0.0 && seconds <= kMaxTimeoutS))
    throw ConfigError(fmt::format("communication timeout must be in (0, {}] seconds, got {}",
                                  kMaxTimeoutS, seconds));
}

bool Work::wait_for(double seconds) {
  WaitBound bound(seconds);
  while (!test()) {
    if (bound.passed()) return false;
    std::this_thread::yield();
  }
  return true;
}

ExchangeBuffers ExchangeBuffers::none(int world) {
  ExchangeBuffers b;
  b.send.assign(world, nullptr);
  b.send_bytes.assign(world, 0);
  b.recv.assign(world, nullptr);
  b.recv_bytes.assign(world, 0);
  b.send_pieces.assign(world, {});
  b.recv_pieces.assign(world, {});
  return b;
}

std::vector<size_t> ExchangeBuffers::piece_ends(int r, bool send) const {
  const std::vector<std::vector<size_t>>& pieces = send ? send_pieces : recv_pieces;
  const size_t bytes = send ? send_bytes[r] : recv_bytes[r];
  if (static_cast<size_t>(r) < pieces.size() && !pieces[r].empty()) return pieces[r];
  return {bytes};
}

void check_exchange_buffers(const ExchangeBuffers& b, int world) {
  const auto n = static_cast<size_t>(world);
  ADAQP_CHECK(
      b.send.size() == n && b.send_bytes.size() == n && b.recv.size() == n &&
          b.recv_bytes.size() == n,
      fmt::format("exchange needs one entry per rank ({}); got send {}, send_bytes {}, "
                  "recv {}, recv_bytes {}",
                  n, b.send.size(), b.send_bytes.size(), b.recv.size(), b.recv_bytes.size()));
  for (size_t r = 0; r < n; ++r) {
    ADAQP_CHECK(b.send_bytes[r] == 0 || b.send[r] != nullptr,
                fmt::format("null send buffer for rank {} ({} bytes)", r, b.send_bytes[r]));
    ADAQP_CHECK(b.recv_bytes[r] == 0 || b.recv[r] != nullptr,
                fmt::format("null recv buffer for rank {} ({} bytes)", r, b.recv_bytes[r]));
  }
  for (bool send : {true, false}) {
    const std::vector<std::vector<size_t>>& pieces = send ? b.send_pieces : b.recv_pieces;
    ADAQP_CHECK(pieces.empty() || pieces.size() == n,
                fmt::format("{}_pieces has {} entries for {} ranks", send ? "send" : "recv",
                            pieces.size(), n));
    for (size_t r = 0; r < pieces.size(); ++r) {
      if (pieces[r].empty()) continue;
      const size_t bytes = send ? b.send_bytes[r] : b.recv_bytes[r];
      size_t prev = 0;
      for (size_t end : pieces[r]) {
        ADAQP_CHECK(end > prev, fmt::format("{} pieces of rank {}: [{}] not ascending from 1",
                                            send ? "send" : "recv", r, fmt::join(pieces[r], ", ")));
        prev = end;
      }
      ADAQP_CHECK_EQ(prev, bytes,
                     fmt::format("{} pieces of rank {}: their end, the block's bytes",
                                 send ? "send" : "recv", r));
    }
  }
}

double run_hook(const std::function<void(int, int, void*)>& hook, int peer, int piece,
                void* stream) {
  if (!hook) return 0.0;
  const double t0 = steady_now_s();
  hook(peer, piece, stream);
  return steady_now_s() - t0;
}

std::string broadcast_text(Communicator& comm, std::string text) {
  uint64_t size = text.size();
  comm.broadcast(&size, sizeof size, 0);
  text.resize(size);
  if (size > 0) comm.broadcast(text.data(), size, 0);
  return text;
}

bool any_rank_failed(Communicator& comm, bool local_failed, int* first_failed, int* failed) {
  // max over ranks of (size - rank) for the failing ones identifies the lowest failing rank.
  double flag = local_failed ? static_cast<double>(comm.size() - comm.rank()) : 0.0;
  comm.allreduce_max(&flag, 1);
  int lowest = flag > 0.0 ? comm.size() - static_cast<int>(flag) : -1;
  if (first_failed != nullptr) *first_failed = lowest;
  if (failed != nullptr) {
    // Every rank knows by now whether any failed: the count costs a collective only then.
    int64_t count = local_failed ? 1 : 0;
    if (lowest >= 0) comm.allreduce_sum(&count, 1);
    *failed = static_cast<int>(count);
  }
  return lowest >= 0;
}

}  // namespace adaqp
