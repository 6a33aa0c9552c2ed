// The MPI communicator under real mpirun at 1..4 ranks: exact bytes through halo exchanges (zero-
// byte peers, chunking, concurrent tags, cancellation), exact collective values, and timeouts that
// name what is missing and leave the ranks able to go on.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/mpi_error.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/timeouts.h"
#include "exchange_pattern.h"
#include "mpi_skip.h"

// The point-to-point and collective calls the communicator posts, counted as they pass through this
// binary (MPI's profiling interface: these definitions take the MPI_ names, the library's stay
// reachable as PMPI_), so that the tests see the chunks themselves, not only what they carried.
namespace {

struct PostedCalls {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> largest{0};  // the largest count of one call
  std::atomic<int64_t> total{0};    // the counts' sum

  void add(int count) {
    ++calls;
    total += count;
    int64_t seen = largest.load();
    while (count > seen && !largest.compare_exchange_weak(seen, count)) {
    }
  }
  void reset() {
    calls = 0;
    largest = 0;
    total = 0;
  }
};

PostedCalls posted_isend, posted_irecv, posted_iallreduce, posted_ibcast;

}  // namespace

extern "C" int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  posted_isend.add(count);
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

extern "C" int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Request* request) {
  posted_irecv.add(count);
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}

extern "C" int MPI_Iallreduce(const void* in, void* out, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  posted_iallreduce.add(count);
  return PMPI_Iallreduce(in, out, count, type, op, comm, request);
}

extern "C" int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                          MPI_Request* request) {
  posted_ibcast.add(count);
  return PMPI_Ibcast(buf, count, type, root, comm, request);
}

namespace adaqp {
namespace {

using test::kCanary;
using test::kCanaryBytes;
using test::kTestTimeoutS;
using test::pattern;

std::unique_ptr<MpiCommunicator> world(double timeout_s = kTestTimeoutS,
                                       size_t max_chunk_bytes = size_t{1} << 30) {
  MpiCommunicatorOptions options;
  options.timeout_s = timeout_s;
  options.max_chunk_bytes = max_chunk_bytes;
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, options);
}

using SizeFn = size_t (*)(int sender, int receiver);

// Sizes with zero-byte peers in both directions and one transfer (1 -> 0) above any eager limit.
size_t mixed_size(int sender, int receiver) {
  if ((2 * sender + receiver) % 3 == 1) return 0;
  size_t bytes = 97 * static_cast<size_t>(sender + 1) + 1013 * static_cast<size_t>(receiver);
  if (sender == 1 && receiver == 0) bytes += size_t{3} << 20;
  return bytes;
}

// Every pair moves a few bytes.
size_t small_size(int sender, int receiver) {
  return 64 + 8 * static_cast<size_t>(sender) + static_cast<size_t>(receiver);
}

// Send and receive buffers of one exchange; every receive buffer (the own rank's included) is
// followed by canary bytes that must stay untouched.
struct Exchange {
  Exchange(int rank, int size, int salt, SizeFn bytes) : rank(rank), salt(salt), bytes(bytes) {
    send.resize(size);
    recv.resize(size);
    for (int r = 0; r < size; ++r) {
      size_t out = bytes(rank, r);
      size_t in = bytes(r, rank);
      for (size_t i = 0; i < out; ++i) send[r].push_back(pattern(rank, r, i, salt));
      recv[r].assign(in + kCanaryBytes, kCanary);
      buffers.send.push_back(send[r].data());
      buffers.send_bytes.push_back(out);
      buffers.recv.push_back(recv[r].data());
      buffers.recv_bytes.push_back(in);
    }
  }

  // Exact content from every peer; the own rank's entry is skipped, so it stays all canary.
  void expect_received() const {
    for (size_t r = 0; r < recv.size(); ++r) {
      const int sender = static_cast<int>(r);
      const size_t n = bytes(sender, rank);
      size_t wrong = 0;
      for (size_t i = 0; i < n; ++i) {
        uint8_t expected = sender == rank ? kCanary : pattern(sender, rank, i, salt);
        if (recv[r][i] != expected) ++wrong;
      }
      for (size_t i = n; i < recv[r].size(); ++i) wrong += recv[r][i] != kCanary;
      EXPECT_EQ(wrong, 0u) << "rank " << rank << ": bytes from rank " << sender << " (" << n
                           << " expected, salt " << salt << ")";
    }
  }

  int rank;
  int salt;
  SizeFn bytes;
  std::vector<std::vector<uint8_t>> send;
  std::vector<std::vector<uint8_t>> recv;
  ExchangeBuffers buffers;
};

// Runs `call`, expecting a CommError whose message contains every one of `parts`.
template <typename Call>
void expect_comm_error(Call call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "expected CommError";
  } catch (const CommError& e) {
    const std::string message = e.what();
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
  }
}

TEST(MpiCommunicator, ReportsRankAndSizeOfTheCommunicatorItWasGiven) {
  int rank = -1, size = -1;
  ASSERT_EQ(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
  auto comm = make_mpi_communicator(MPI_COMM_WORLD, 12.5);
  EXPECT_EQ(comm->rank(), rank);
  EXPECT_EQ(comm->size(), size);
  EXPECT_EQ(comm->timeout(), 12.5);
}

TEST(MpiCommunicator, ExchangeDeliversExactBytesWithZeroBytePeersAndSkipsOwnRank) {
  auto comm = world();
  Exchange ex(comm->rank(), comm->size(), 1, mixed_size);
  auto work = comm->exchange(ex.buffers, {1});
  work->wait();
  EXPECT_TRUE(work->test());
  ex.expect_received();
}

TEST(MpiCommunicator, ExchangeSplitsTransfersIntoChunksOfTheMessageLimit) {
  // 1000-byte chunks: mixed_size gives transfers below, above and far above the limit.
  auto comm = world(kTestTimeoutS, 1000);
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  Exchange ex(comm->rank(), comm->size(), 2, mixed_size);
  int64_t out = 0, in = 0, fewest_sends = 0, fewest_recvs = 0;
  for (int r = 0; r < comm->size(); ++r) {
    if (r == comm->rank()) continue;
    const auto sent = static_cast<int64_t>(mixed_size(comm->rank(), r));
    const auto received = static_cast<int64_t>(mixed_size(r, comm->rank()));
    out += sent;
    in += received;
    fewest_sends += (sent + 999) / 1000;
    fewest_recvs += (received + 999) / 1000;
  }
  posted_isend.reset();
  posted_irecv.reset();
  auto work = comm->exchange(ex.buffers, {2});
  work->wait();
  ex.expect_received();
  // Every request within the limit, together exactly the bytes of the transfers, and as many as
  // the limit makes at least (pieces of a block may cut a transfer into more).
  EXPECT_LE(posted_isend.largest, 1000);
  EXPECT_LE(posted_irecv.largest, 1000);
  EXPECT_EQ(posted_isend.total, out);
  EXPECT_EQ(posted_irecv.total, in);
  EXPECT_GE(posted_isend.calls, fewest_sends);
  EXPECT_GE(posted_irecv.calls, fewest_recvs);
}

TEST(MpiCommunicator, TwoExchangesInFlightAreSeparatedByTag) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  // Same sizes, different contents; odd ranks post them in the opposite order, so only the tags
  // can pair each receive with the right send.
  Exchange a(comm->rank(), comm->size(), 3, small_size);
  Exchange b(comm->rank(), comm->size(), 4, small_size);
  std::unique_ptr<Work> work_a, work_b;
  if (comm->rank() % 2 == 0) {
    work_a = comm->exchange(a.buffers, {10});
    work_b = comm->exchange(b.buffers, {11});
  } else {
    work_b = comm->exchange(b.buffers, {11});
    work_a = comm->exchange(a.buffers, {10});
  }
  work_b->wait();
  work_a->wait();
  a.expect_received();
  b.expect_received();
}

// Pieces of a block of `bytes` bytes: its thirds (fewer when it is smaller than 3 bytes).
std::vector<size_t> thirds(size_t bytes) {
  std::vector<size_t> ends;
  for (size_t k = 1; k <= 3; ++k) {
    const size_t end = bytes * k / 3;
    if (end > (ends.empty() ? 0 : ends.back())) ends.push_back(end);
  }
  return ends;
}

// The hooks of one grouped exchange: each piece of a peer's block (the whole block, or its thirds
// sent in chunks smaller than a piece) is packed once, in order, right before it is sent (the pack
// writes what travels), and unpacked once, in order, after it has arrived (the unpack reads it);
// the timing covers every arrival.
TEST(MpiCommunicator, ExchangeHooksPackEachPieceBeforeItsSendAndUnpackEachArrival) {
  for (bool cut : {false, true}) {
    auto comm = cut ? world(kTestTimeoutS, /*max_chunk_bytes=*/1000) : world();
    ADAQP_REQUIRE_RANKS(comm->size(), 2);
    for (bool background : {false, true}) {
      SCOPED_TRACE(std::string(cut ? "thirds" : "whole blocks") +
                   (background ? ", background" : ", caller"));
      Exchange ex(comm->rank(), comm->size(), 12, mixed_size);
      const Exchange want = ex;
      if (cut) {
        ex.buffers.send_pieces.assign(comm->size(), {});
        ex.buffers.recv_pieces.assign(comm->size(), {});
        for (int r = 0; r < comm->size(); ++r) {
          ex.buffers.send_pieces[r] = thirds(ex.buffers.send_bytes[r]);
          ex.buffers.recv_pieces[r] = thirds(ex.buffers.recv_bytes[r]);
        }
      }
      for (auto& block : ex.send) std::fill(block.begin(), block.end(), 0);  // the pack writes it
      std::vector<int> packed(comm->size(), 0), unpacked(comm->size(), 0);
      std::vector<std::vector<uint8_t>> copies(comm->size());
      std::vector<std::thread::id> threads;
      ExchangeOptions options;
      options.tag = 12;
      options.background = background;
      options.hooks.pack = [&](int r, int piece, void* stream) {
        EXPECT_EQ(stream, nullptr);
        EXPECT_EQ(piece, packed[r]++) << "pieces in order";
        threads.push_back(std::this_thread::get_id());
        const std::vector<size_t> ends = ex.buffers.piece_ends(r, true);
        const size_t begin = piece == 0 ? 0 : ends[piece - 1];
        std::copy(want.send[r].begin() + begin, want.send[r].begin() + ends[piece],
                  ex.send[r].begin() + begin);
      };
      options.hooks.unpack = [&](int r, int piece, void*) {
        EXPECT_EQ(piece, unpacked[r]++) << "pieces in order";
        const std::vector<size_t> ends = ex.buffers.piece_ends(r, false);
        const size_t begin = piece == 0 ? 0 : ends[piece - 1];
        copies[r].insert(copies[r].end(), ex.recv[r].begin() + begin,
                         ex.recv[r].begin() + ends[piece]);
      };
      // The pack copies into the vectors in place (same sizes): the buffers stay valid.
      auto work = comm->exchange(ex.buffers, options);
      work->wait();
      ex.expect_received();
      const ExchangeTiming t = work->timing();
      for (int r = 0; r < comm->size(); ++r) {
        const bool sends = r != comm->rank() && ex.buffers.send_bytes[r] > 0;
        const bool receives = r != comm->rank() && ex.buffers.recv_bytes[r] > 0;
        const int send_pieces = static_cast<int>(ex.buffers.piece_ends(r, true).size());
        const int recv_pieces = static_cast<int>(ex.buffers.piece_ends(r, false).size());
        EXPECT_EQ(packed[r], sends ? send_pieces : 0) << "peer " << r;
        EXPECT_EQ(unpacked[r], receives ? recv_pieces : 0) << "peer " << r;
        if (cut && receives && ex.buffers.recv_bytes[r] >= 3) {
          EXPECT_EQ(recv_pieces, 3);
        }
        if (receives) {
          // What each unpack read had already arrived.
          ASSERT_EQ(copies[r].size(), ex.buffers.recv_bytes[r]) << "peer " << r;
          EXPECT_TRUE(std::equal(copies[r].begin(), copies[r].end(), ex.recv[r].begin()));
          EXPECT_GE(t.arrival_s[r], t.started_s);
          EXPECT_LE(t.arrival_s[r], t.completed_s);
        } else {
          EXPECT_EQ(t.arrival_s[r], -1.0);
        }
      }
      EXPECT_GE(t.codec_s, 0.0);
      // A background exchange runs its hooks on the communicator's progress thread.
      const bool on_thread = background && comm->allows_progress_thread();
      for (std::thread::id id : threads) EXPECT_EQ(id != std::this_thread::get_id(), on_thread);
    }
  }
}

// Pieces that do not cover their block are refused before anything is posted.
TEST(MpiCommunicator, BadPiecesAreRefused) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  Exchange ex(comm->rank(), comm->size(), 15, small_size);
  const int peer = (comm->rank() + 1) % comm->size();
  ex.buffers.send_pieces.assign(comm->size(), {});
  ex.buffers.send_pieces[peer] = {10, 5, ex.buffers.send_bytes[peer]};
  EXPECT_THROW(comm->exchange(ex.buffers, {15}), InvariantError);
  ex.buffers.send_pieces[peer] = {10, ex.buffers.send_bytes[peer] - 1};
  EXPECT_THROW(comm->exchange(ex.buffers, {15}), InvariantError);
}

// A hook that throws fails its exchange: from exchange() when it runs on the caller, from wait()
// when it runs in the background; the ranks can go on afterwards.
TEST(MpiCommunicator, AThrowingHookFailsItsExchangeOnly) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  for (bool background : {false, true}) {
    Exchange ex(comm->rank(), comm->size(), 13, small_size);
    ExchangeOptions options;
    options.tag = 13;
    options.background = background;
    options.hooks.unpack = [](int r, int, void*) {
      throw InputError("block", "peer " + std::to_string(r), "cannot decode");
    };
    try {
      auto work = comm->exchange(ex.buffers, options);
      work->wait();
      ADD_FAILURE() << "the unpack error was lost";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot decode"), std::string::npos) << e.what();
    }
    comm->barrier();
  }
  Exchange ex(comm->rank(), comm->size(), 14, small_size);
  comm->exchange(ex.buffers, {14})->wait();
  ex.expect_received();
}

// Ends that disagree on a block's size: rank 1 sends rank 0 67 bytes where rank 0 posted 72 (MPI
// takes the shorter message into the larger buffer, its tail stale), and nothing else moves. Rank
// 0's exchange fails, naming both sizes (while posting or in the wait); the send completes at
// rank 1.
size_t posted_72(int sender, int receiver) {
  return sender == 1 && receiver == 0 ? 72 : 0;
}
size_t sent_67(int sender, int receiver) {
  return sender == 1 && receiver == 0 ? 67 : 0;
}

TEST(MpiCommunicator, AShortBlockFailsItsReceiver) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  for (bool background : {false, true}) {
    Exchange ex(comm->rank(), comm->size(), 15, comm->rank() == 0 ? posted_72 : sent_67);
    ExchangeOptions options;
    options.tag = 15;
    options.background = background;
    if (comm->rank() == 0) {
      expect_comm_error([&] { comm->exchange(ex.buffers, options)->wait(); },
                        {"rank 0 received 67 bytes from peer 1 where it expected 72"});
    } else {
      comm->exchange(ex.buffers, options)->wait();
    }
    comm->barrier();
  }
}

TEST(MpiCommunicator, WorkDestroyedBeforeCompletionCancelsItsReceives) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  constexpr int kTag = 20;
  {
    // Receives nobody sends: they must be cancelled, not left to steal the next exchange's data.
    Exchange orphan(comm->rank(), comm->size(), 5, small_size);
    for (auto& bytes : orphan.buffers.send_bytes) bytes = 0;
    auto work = comm->exchange(orphan.buffers, {kTag});
    EXPECT_FALSE(work->test());
  }
  comm->barrier();
  Exchange ex(comm->rank(), comm->size(), 6, small_size);
  comm->exchange(ex.buffers, {kTag})->wait();
  ex.expect_received();
}

// A failed exchange's send that its peer never takes (a stalled peer) is waited for at most
// kCancelWaitS, not another timeout_s, before its request is freed and the error goes on.
TEST(MpiCommunicator, AFailedExchangeWaitsBrieflyForASendItsPeerNeverTakes) {
  auto comm = world(60.0);
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  constexpr int kTag = 40;
  // Beyond any eager limit: the send completes only once rank 1 receives it.
  constexpr size_t kBytes = size_t{8} << 20;
  std::vector<uint8_t> block(kBytes, 7);
  ExchangeBuffers b = ExchangeBuffers::none(comm->size());
  if (comm->rank() == 0) {
    b.send[1] = block.data();
    b.send_bytes[1] = kBytes;
    const double t0 = steady_now_s();
    {
      auto work = comm->exchange(b, {kTag});
      EXPECT_FALSE(work->test());
    }
    const double waited = steady_now_s() - t0;
    EXPECT_GE(waited, kCancelWaitS * 0.9) << "the send was not pending: the test shows nothing";
    EXPECT_LT(waited, kCancelWaitS + 10.0) << "waited for the 60 s timeout";
  }
  comm->barrier();
  // Only now the receive: the freed send still completes, and nothing is left for later tests.
  if (comm->rank() == 1) {
    b.recv[0] = block.data();
    b.recv_bytes[0] = kBytes;
    std::fill(block.begin(), block.end(), 0);
    comm->exchange(b, {kTag})->wait();
    EXPECT_EQ(std::count(block.begin(), block.end(), 7), static_cast<std::ptrdiff_t>(kBytes));
  }
  comm->barrier();
}

TEST(MpiCommunicator, ExchangeTimeoutNamesTheMissingPeerAndTheExchangeCanResume) {
  // Duplicated under the long bound (a rank of a loaded host can come to the duplicate more than
  // 0.5 s after the others), then the bound under test.
  auto comm = world();
  comm->set_timeout(0.5);
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  constexpr int kTag = 30;
  const int rank = comm->rank();
  Exchange ex(rank, comm->size(), 7, small_size);
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    comm->set_timeout(kTestTimeoutS);
    comm->exchange(ex.buffers, {kTag})->wait();
  } else {
    auto work = comm->exchange(ex.buffers, {kTag});
    expect_comm_error([&] { work->wait(); },
                      {"halo exchange (tag 30) timed out after 0.5 s on rank " +
                           std::to_string(rank) + "; still waiting for: recv from [0",
                       "send to ["});
    comm->set_timeout(kTestTimeoutS);
    work->wait();
  }
  ex.expect_received();
  comm->barrier();
}

TEST(MpiCommunicator, CollectivesGiveExactValuesWithAndWithoutChunking) {
  for (size_t chunk : {size_t{1} << 30, size_t{64}}) {
    auto comm = world(kTestTimeoutS, chunk);
    const int rank = comm->rank();
    const int np = comm->size();
    const double ranks_sum = np * (np - 1) / 2.0;
    constexpr size_t n = 100;

    std::vector<float> f(n);
    for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(rank) + 0.25f * i;
    posted_iallreduce.reset();
    comm->allreduce_sum(f.data(), n);
    // 100 floats: one call without a limit, 7 of at most 16 values at 64 bytes.
    const int64_t per_call = static_cast<int64_t>(std::min<size_t>(n, chunk / sizeof(float)));
    EXPECT_EQ(posted_iallreduce.calls, (static_cast<int64_t>(n) + per_call - 1) / per_call);
    EXPECT_EQ(posted_iallreduce.largest, per_call);
    EXPECT_EQ(posted_iallreduce.total, static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(f[i], static_cast<float>(ranks_sum + np * 0.25 * i)) << "float " << i;

    std::vector<double> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = (rank + 1) * 0.5 + i;
    comm->allreduce_sum(d.data(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], (ranks_sum + np) * 0.5 + np * static_cast<double>(i)) << "double " << i;

    std::vector<int64_t> l(n);
    for (size_t i = 0; i < n; ++i) l[i] = (int64_t{rank} << 40) + static_cast<int64_t>(i);
    comm->allreduce_sum(l.data(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(l[i], (static_cast<int64_t>(ranks_sum) << 40) + np * static_cast<int64_t>(i))
          << "int64 " << i;

    std::vector<double> m(n);
    for (size_t i = 0; i < n; ++i)
      m[i] = static_cast<int>(i) % np == rank ? 1000.0 + i : -static_cast<double>(rank);
    comm->allreduce_max(m.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(m[i], 1000.0 + i) << "max " << i;
  }
}

TEST(MpiCommunicator, BroadcastCopiesTheRootsBytesFromEveryRoot) {
  for (size_t chunk : {size_t{1} << 30, size_t{64}}) {
    auto comm = world(kTestTimeoutS, chunk);
    for (int root = 0; root < comm->size(); ++root) {
      std::vector<uint8_t> data(1000, 0);
      if (comm->rank() == root)
        for (size_t i = 0; i < data.size(); ++i) data[i] = pattern(root, 0, i, 8);
      posted_ibcast.reset();
      comm->broadcast(data.data(), data.size(), root);
      const int64_t per_call = static_cast<int64_t>(std::min<size_t>(data.size(), chunk));
      EXPECT_EQ(posted_ibcast.calls, (1000 + per_call - 1) / per_call);
      EXPECT_EQ(posted_ibcast.largest, per_call);
      EXPECT_EQ(posted_ibcast.total, 1000);
      for (size_t i = 0; i < data.size(); ++i)
        ASSERT_EQ(data[i], pattern(root, 0, i, 8)) << "root " << root << " byte " << i;
    }
  }
}

TEST(MpiCommunicator, AllgatherConcatenatesContributionsInRankOrder) {
  auto comm = world();
  constexpr size_t kBytes = 37;
  std::vector<uint8_t> in(kBytes);
  for (size_t i = 0; i < kBytes; ++i) in[i] = pattern(comm->rank(), 0, i, 9);
  std::vector<uint8_t> out(kBytes * comm->size(), 0);
  comm->allgather(in.data(), out.data(), kBytes);
  for (int r = 0; r < comm->size(); ++r)
    for (size_t i = 0; i < kBytes; ++i)
      ASSERT_EQ(out[r * kBytes + i], pattern(r, 0, i, 9)) << "rank " << r << " byte " << i;
}

TEST(MpiCommunicator, CollectiveTimeoutNamesTheCollectiveAndLeavesTheCommunicatorUnusable) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  {
    auto late = world();  // duplicated under the long bound, as above
    late->set_timeout(0.5);
    if (comm->rank() == 0) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      late->set_timeout(kTestTimeoutS);
      late->barrier();
    } else {
      const std::string rank = std::to_string(comm->rank());
      expect_comm_error([&] { late->barrier(); },
                        {"barrier timed out after 0.5 s on rank " + rank});
      double x = 1.0;
      expect_comm_error([&] { late->allreduce_sum(&x, 1); },
                        {"allreduce_sum(double) on rank " + rank + ": communicator unusable",
                         "barrier timed out"});
      // The destructor then waits for the pending barrier, which rank 0 completes late.
      late->set_timeout(kTestTimeoutS);
    }
  }
  comm->barrier();
}

TEST(MpiCommunicator, ARankLateToTheDuplicateEndsTheOthersWaitAtTheTimeout) {
  auto comm = world();
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  if (comm->rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // The others' duplicates are still pending (abandoned, not cancelled): this one completes.
    auto late = world(kTestTimeoutS);
  } else {
    const double t0 = steady_now_s();
    expect_comm_error([&] { world(0.5); },
                      {"duplicating the communicator timed out after 0.5 s on rank " +
                       std::to_string(comm->rank())});
    EXPECT_LT(steady_now_s() - t0, 1.4);
  }
  comm->barrier();
}

TEST(MpiCommunicator, RejectsMalformedExchangesAndTimeouts) {
  auto comm = world();
  Exchange ex(comm->rank(), comm->size(), 10, small_size);
  EXPECT_THROW(comm->exchange(ex.buffers, {-1}), InvariantError);
  ex.buffers.recv_bytes.push_back(1);
  EXPECT_THROW(comm->exchange(ex.buffers, {1}), InvariantError);
  EXPECT_THROW(comm->set_timeout(0.0), ConfigError);
  EXPECT_THROW(comm->set_timeout(-1.0), ConfigError);
  EXPECT_THROW(comm->set_timeout(std::numeric_limits<double>::quiet_NaN()), ConfigError);
  EXPECT_THROW(make_mpi_communicator(MPI_COMM_WORLD, 0.0), ConfigError);
  EXPECT_EQ(comm->timeout(), kTestTimeoutS);
  comm->set_timeout(3.0);
  EXPECT_EQ(comm->timeout(), 3.0);
}

TEST(AnyRankFailed, AllRanksAgreeOnWhetherWhichRankFailedFirstAndHowManyFailed) {
  auto comm = world();
  const int rank = comm->rank();
  const int last = comm->size() - 1;
  int first = 123, failed = 123;
  EXPECT_FALSE(any_rank_failed(*comm, false, &first, &failed));
  EXPECT_EQ(first, -1);
  EXPECT_EQ(failed, 0);
  EXPECT_TRUE(any_rank_failed(*comm, rank == last, &first, &failed));
  EXPECT_EQ(first, last);
  EXPECT_EQ(failed, 1);
  EXPECT_TRUE(any_rank_failed(*comm, rank >= last / 2, &first, &failed));
  EXPECT_EQ(first, last / 2);
  EXPECT_EQ(failed, last - last / 2 + 1);
  EXPECT_TRUE(any_rank_failed(*comm, true, nullptr, &failed));
  EXPECT_EQ(failed, comm->size());
}

TEST(MpiError, CheckMpiNamesTheCallRankPeerAndMpiText) {
  EXPECT_NO_THROW(check_mpi(MPI_SUCCESS, "MPI_Isend", 2, 3));
  const std::string text = mpi_error_string(MPI_ERR_RANK);
  EXPECT_EQ(text.find("unknown"), std::string::npos) << text;
  expect_comm_error([] { check_mpi(MPI_ERR_RANK, "MPI_Isend", 2, 3); },
                    {"MPI_Isend failed on rank 2 (peer 3): " + text});
  expect_comm_error([] { check_mpi(MPI_ERR_TAG, "MPI_Ibarrier", 1); },
                    {"MPI_Ibarrier failed on rank 1: " + mpi_error_string(MPI_ERR_TAG)});
}

TEST(MpiSession, WorldReturnsErrorCodesInsteadOfAborting) {
  int size = 0;
  ASSERT_EQ(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
  char byte = 0;
  int code = MPI_Send(&byte, 1, MPI_BYTE, size, 0, MPI_COMM_WORLD);
  int error_class = MPI_SUCCESS;
  ASSERT_EQ(MPI_Error_class(code, &error_class), MPI_SUCCESS);
  EXPECT_EQ(error_class, MPI_ERR_RANK);
}

}  // namespace
}  // namespace adaqp
