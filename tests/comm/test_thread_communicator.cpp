// The in-process transport (thread_communicator.h) keeps the Communicator contract: exact bytes
// through grouped exchanges with their hooks (pack before each send, unpack after each arrival),
// separate tags, exact collectives, a timeout naming the missing peer, and a caller's bounded wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/common/error.h"

namespace adaqp {
namespace {

uint8_t pattern(int sender, int receiver, size_t i) {
  return static_cast<uint8_t>(sender * 131 + receiver * 31 + i * 7);
}

TEST(ThreadCommunicator, ExchangeRunsTheHooksAroundExactBytes) {
  for (int size : {1, 2, 4}) {
    run_thread_ranks(size, [](Communicator& comm) {
      const int rank = comm.rank(), size = comm.size();
      std::vector<std::vector<uint8_t>> out(size), in(size), copies(size);
      ExchangeBuffers b = ExchangeBuffers::none(size);
      for (int r = 0; r < size; ++r) {
        const size_t n = (r + rank) % 3 == 1 ? 0 : 10 + static_cast<size_t>(r + 2 * rank);
        out[r].assign(n, 0);
        in[r].assign(10 + static_cast<size_t>(rank + 2 * r), 0xEE);
        if (r == rank) continue;
        b.send[r] = out[r].data();
        b.send_bytes[r] = n;
        b.recv[r] = in[r].data();
        b.recv_bytes[r] = (rank + r) % 3 == 1 ? 0 : in[r].size();
      }
      std::vector<int> packed(size, 0), unpacked(size, 0);
      ExchangeOptions options(5);
      options.hooks.pack = [&](int r, int piece, void*) {
        EXPECT_EQ(piece, 0);
        ++packed[r];
        for (size_t i = 0; i < out[r].size(); ++i) out[r][i] = pattern(rank, r, i);
      };
      options.hooks.unpack = [&](int r, int piece, void*) {
        EXPECT_EQ(piece, 0);
        ++unpacked[r];
        copies[r] = in[r];
      };
      auto work = comm.exchange(b, options);
      work->wait();
      EXPECT_TRUE(work->test());
      const ExchangeTiming t = work->timing();
      for (int r = 0; r < size; ++r) {
        EXPECT_EQ(packed[r], b.send_bytes[r] > 0 ? 1 : 0);
        EXPECT_EQ(unpacked[r], b.recv_bytes[r] > 0 ? 1 : 0);
        if (b.recv_bytes[r] == 0) {
          EXPECT_EQ(t.arrival_s[r], -1.0);
          continue;
        }
        EXPECT_GE(t.arrival_s[r], t.started_s);
        for (size_t i = 0; i < b.recv_bytes[r]; ++i) {
          ASSERT_EQ(copies[r][i], pattern(r, rank, i)) << r << " " << i;
        }
      }
    });
  }
}

TEST(ThreadCommunicator, CollectivesAreExactAndAlikeOnEveryRank) {
  run_thread_ranks(3, [](Communicator& comm) {
    const int rank = comm.rank();
    double d[2] = {0.5 * rank, -1.0 * rank};
    comm.allreduce_sum(d, 2);
    EXPECT_EQ(d[0], 1.5);
    EXPECT_EQ(d[1], -3.0);
    int64_t k = int64_t{1} << (40 + rank);
    comm.allreduce_sum(&k, 1);
    EXPECT_EQ(k, (int64_t{1} << 40) + (int64_t{1} << 41) + (int64_t{1} << 42));
    double m = rank == 1 ? 7.0 : 1.0;
    comm.allreduce_max(&m, 1);
    EXPECT_EQ(m, 7.0);
    int value = rank == 2 ? 42 : -1;
    comm.broadcast(&value, sizeof value, 2);
    EXPECT_EQ(value, 42);
    const int mine = 10 * rank;
    std::vector<int> all(3);
    comm.allgather(&mine, all.data(), sizeof mine);
    EXPECT_EQ(all, (std::vector<int>{0, 10, 20}));
    comm.barrier();
    EXPECT_TRUE(any_rank_failed(comm, rank == 1));
  });
}

TEST(ThreadCommunicator, AMissingPeerIsATimeoutNamingIt) {
  std::atomic<int> timeouts{0};
  run_thread_ranks(2, [&](Communicator& comm) {
    if (comm.rank() == 1) return;  // never sends
    uint8_t in[4];
    ExchangeBuffers b = ExchangeBuffers::none(2);
    b.recv[1] = in;
    b.recv_bytes[1] = sizeof in;
    comm.set_timeout(0.2);
    try {
      comm.exchange(b, {9})->wait();
    } catch (const CommError& e) {
      EXPECT_NE(std::string(e.what()).find("still waiting for: recv from [1]"), std::string::npos)
          << e.what();
      ++timeouts;
    }
  });
  EXPECT_EQ(timeouts.load(), 1);
}

// Work::wait_for bounds the caller's wait, not the exchange: false while a peer has not sent (no
// error, the communicator's timeout is far off), then true once it has, with the bytes intact.
TEST(ThreadCommunicator, WaitForReturnsAtItsBoundAndLeavesTheExchangeInFlight) {
  std::atomic<bool> gave_up{false};
  run_thread_ranks(2, [&](Communicator& comm) {
    comm.set_timeout(30);
    uint8_t out[4] = {1, 2, 3, 4}, in[4] = {0, 0, 0, 0};
    ExchangeBuffers b = ExchangeBuffers::none(2);
    if (comm.rank() == 1) {
      // Sends only after rank 0 gave up (or, should rank 0 fail first, after 20 s: no hang).
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!gave_up.load() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      b.send[0] = out;
      b.send_bytes[0] = sizeof out;
      comm.exchange(b, {9})->wait();
      return;
    }
    b.recv[1] = in;
    b.recv_bytes[1] = sizeof in;
    const std::unique_ptr<Work> work = comm.exchange(b, {9});
    EXPECT_FALSE(work->wait_for(0.05));
    gave_up = true;
    EXPECT_TRUE(work->wait_for(20));
    EXPECT_EQ(std::vector<uint8_t>(in, in + 4), std::vector<uint8_t>(out, out + 4));
  });
  EXPECT_TRUE(gave_up.load());
}

}  // namespace
}  // namespace adaqp
