// Point-to-point link between MPI rank 0 and a peer rank R (--peer, default 1): the latency of a
// small ping-pong and the streaming bandwidth at several message sizes, each phase bounded in time.
// The peer checks every byte it receives (a sequence stamp and a fixed pattern), so each speed line
// carries whether the data arrived intact. With several peers, rank 0 measures its link to each in
// turn, and every line names its peer; other ranks take no part. scripts/vcluster.sh --probe runs
// it across the shaped links of a virtual cluster (and, with several ranks per host, also between
// two ranks of one host).
// Usage: mpirun -np N bench_link [--seconds S] [--sizes BYTES,BYTES,...] [--peer R,R,...]
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/comm/mpi_session.h"
#include "adaqp/common/error.h"
#include "bench_options.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kTagData = 1;
constexpr int kTagStop = 2;
constexpr int kTagAck = 3;
// Upper bounds of every loop, whatever the time limit says.
constexpr int64_t kMaxPingPongs = 100000;
constexpr int64_t kMaxMessages = 1000000;
// Sends in flight at once while streaming, so the link never idles between messages.
constexpr int kWindow = 4;
constexpr int64_t kStampBytes = 8;

struct Options {
  double seconds = 1.0;  // per phase
  std::vector<int64_t> sizes = {1 << 10, 1 << 16, 1 << 20, 1 << 22};
  std::vector<int> peers = {1};
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Parsed before MPI starts, so that a bad command line ends each rank before MPI_Init.
Options parse_options(int argc, char** argv) {
  Options opt;
  adaqp::bench::Options cli("bench_link",
                            "Latency and bandwidth between rank 0 and each peer, under MPI");
  cli.add("--seconds", &opt.seconds, "seconds per phase", 1e-3, 60.0)
      .add("--sizes", &opt.sizes, "message sizes in bytes", kStampBytes, int64_t{1} << 30)
      .add("--peer", &opt.peers, "ranks measured against rank 0");
  cli.parse(argc, argv);
  return opt;
}

// Byte j of every message, apart from the leading sequence stamp.
std::vector<unsigned char> pattern(int64_t bytes) {
  std::vector<unsigned char> p(static_cast<size_t>(bytes));
  for (int64_t j = 0; j < bytes; ++j) p[j] = static_cast<unsigned char>((j * 131 + 7) & 0xff);
  return p;
}

void stamp(std::vector<unsigned char>& message, int64_t seq) {
  std::memcpy(message.data(), &seq, kStampBytes);
}

bool intact(const std::vector<unsigned char>& message, const std::vector<unsigned char>& expected,
            int64_t seq) {
  int64_t got = 0;
  std::memcpy(&got, message.data(), kStampBytes);
  return got == seq && std::memcmp(message.data() + kStampBytes, expected.data() + kStampBytes,
                                   expected.size() - kStampBytes) == 0;
}

// Rank 0 pings, `peer` pongs, until the time is up; rank 0 prints the half round-trip times.
void pingpong(int rank, int peer, double seconds) {
  const int64_t bytes = kStampBytes;
  const std::vector<unsigned char> expected = pattern(bytes);
  std::vector<unsigned char> message = expected;
  int64_t bad = 0;
  if (rank == 0) {
    std::vector<double> rtts;
    const auto start = Clock::now();
    for (int64_t seq = 0; seq < kMaxPingPongs && seconds_since(start) < seconds; ++seq) {
      stamp(message, seq);
      const auto t0 = Clock::now();
      adaqp::check_mpi(MPI_Send(message.data(), bytes, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD),
                       "MPI_Send", rank, peer);
      adaqp::check_mpi(MPI_Recv(message.data(), bytes, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE),
                       "MPI_Recv", rank, peer);
      rtts.push_back(seconds_since(t0));
      if (!intact(message, expected, seq)) ++bad;
    }
    adaqp::check_mpi(MPI_Send(nullptr, 0, MPI_BYTE, peer, kTagStop, MPI_COMM_WORLD), "MPI_Send",
                     rank, peer);
    std::sort(rtts.begin(), rtts.end());
    const double us = 1e6 / 2.0;
    std::cout << fmt::format(
                     "{{\"benchmark\":\"link\",\"test\":\"pingpong\",\"peer\":{},\"bytes\":{},"
                     "\"iterations\":{},\"half_rtt_us_min\":{:.1f},\"half_rtt_us_median\":{:.1f},"
                     "\"verified\":{}}}",
                     peer, bytes, rtts.size(), rtts.front() * us, rtts[rtts.size() / 2] * us,
                     bad == 0)
              << "\n";
    std::cout << fmt::format("pingpong 0-{} {} B: half round trip {:.1f} us median ({} iterations)",
                             peer, bytes, rtts[rtts.size() / 2] * us, rtts.size())
              << "\n";
  } else {
    for (int64_t seq = 0;; ++seq) {
      MPI_Status status;
      adaqp::check_mpi(
          MPI_Recv(message.data(), bytes, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status),
          "MPI_Recv", rank, 0);
      if (status.MPI_TAG == kTagStop) break;
      adaqp::check_mpi(MPI_Send(message.data(), bytes, MPI_BYTE, 0, kTagData, MPI_COMM_WORLD),
                       "MPI_Send", rank, 0);
    }
  }
}

// Rank 0 streams messages of `bytes` to `peer` (kWindow in flight) until the time is up, then a
// stop message; the peer answers with the number of corrupt messages once it has them all.
// Returns the number of messages sent (rank 0) and sets `bad` from the answer.
int64_t stream(int rank, int peer, int64_t bytes, double seconds, int64_t& bad) {
  const std::vector<unsigned char> expected = pattern(bytes);
  bad = 0;
  if (rank == 0) {
    std::vector<std::vector<unsigned char>> slots(kWindow, expected);
    std::vector<MPI_Request> requests(kWindow, MPI_REQUEST_NULL);
    const auto start = Clock::now();
    int64_t sent = 0;
    for (; sent < kMaxMessages && seconds_since(start) < seconds; ++sent) {
      const int slot = static_cast<int>(sent % kWindow);
      adaqp::check_mpi(MPI_Wait(&requests[slot], MPI_STATUS_IGNORE), "MPI_Wait", rank, peer);
      stamp(slots[slot], sent);
      adaqp::check_mpi(MPI_Isend(slots[slot].data(), static_cast<int>(bytes), MPI_BYTE, peer,
                                 kTagData, MPI_COMM_WORLD, &requests[slot]),
                       "MPI_Isend", rank, peer);
    }
    adaqp::check_mpi(MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall",
                     rank, peer);
    adaqp::check_mpi(MPI_Send(nullptr, 0, MPI_BYTE, peer, kTagStop, MPI_COMM_WORLD), "MPI_Send",
                     rank, peer);
    adaqp::check_mpi(
        MPI_Recv(&bad, 1, MPI_INT64_T, peer, kTagAck, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv", rank, peer);
    return sent;
  }
  std::vector<unsigned char> message(static_cast<size_t>(bytes));
  int64_t received = 0;
  for (;; ++received) {
    MPI_Status status;
    adaqp::check_mpi(MPI_Recv(message.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_ANY_TAG,
                              MPI_COMM_WORLD, &status),
                     "MPI_Recv", rank, 0);
    if (status.MPI_TAG == kTagStop) break;
    if (!intact(message, expected, received)) ++bad;
  }
  adaqp::check_mpi(MPI_Send(&bad, 1, MPI_INT64_T, 0, kTagAck, MPI_COMM_WORLD), "MPI_Send", rank, 0);
  return received;
}

// The link between rank 0 and `peer`; other ranks return at once.
void measure(int rank, int peer, const Options& opt) {
  if (rank != 0 && rank != peer) return;
  pingpong(rank, peer, std::min(opt.seconds, 0.5));
  for (const int64_t bytes : opt.sizes) {
    int64_t bad = 0;
    stream(rank, peer, bytes, opt.seconds / 10.0, bad);  // warm-up: connection set up, window open
    const auto start = Clock::now();
    const int64_t messages = stream(rank, peer, bytes, opt.seconds, bad);
    const double elapsed = seconds_since(start);
    if (rank != 0) continue;
    const double mbit = static_cast<double>(messages * bytes) * 8.0 / elapsed / 1e6;
    std::cout << fmt::format(
                     "{{\"benchmark\":\"link\",\"test\":\"stream\",\"peer\":{},\"bytes\":{},"
                     "\"messages\":{},\"seconds\":{:.4f},\"mbit_per_s\":{:.2f},\"verified\":{}}}",
                     peer, bytes, messages, elapsed, mbit, bad == 0)
              << "\n";
    std::cout << fmt::format("stream 0-{} {} B x {}: {:.2f} Mbit/s over {:.3f} s{}", peer, bytes,
                             messages, mbit, elapsed,
                             bad == 0 ? "" : fmt::format(" ({} CORRUPT)", bad))
              << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options opt = parse_options(argc, argv);
    adaqp::MpiSession session(&argc, &argv);
    int rank = 0, size = 0;
    adaqp::check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", -1);
    adaqp::check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size", rank);
    if (size < 2) throw adaqp::ConfigError("needs at least 2 ranks, got " + std::to_string(size));
    for (const int peer : opt.peers) {
      if (peer >= size)
        throw adaqp::ConfigError(
            fmt::format("--peer {} is not a rank of the {} started", peer, size));
    }
    for (const int peer : opt.peers) measure(rank, peer, opt);
    adaqp::check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", rank);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_link: " << e.what() << "\n";
    return 1;
  }
}
