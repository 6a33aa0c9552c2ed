// The NCCL communicator under real mpirun: exact bytes through halo exchanges between device
// buffers (zero-byte peers, a multi-megabyte transfer, two exchanges in flight), exact device
// all-reduce/broadcast/allgather values, host-memory collectives and exchanges through MPI,
// rejected mixed-memory exchanges, pack/unpack hooks around the grouped transfer, set-up failures
// agreed by all ranks, and a stalled peer turning into CommError instead of a hang. Skipped, with
// the reason, when NCCL is not built, no GPU is visible, or ranks would share a GPU without a
// distinct NCCL_HOSTID each; the invalid-device test runs without a GPU.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adaqp/config.h"

#if ADAQP_WITH_NCCL
#include <cuda_runtime.h>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/comm/nccl_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/kernels/cuda_device.h"
#include "adaqp/kernels/cuda_support.h"
#include "nccl_skip.h"
#endif
#include "exchange_pattern.h"
#include "mpi_skip.h"

namespace adaqp {
namespace {

#if ADAQP_WITH_NCCL

using test::kCanary;
using test::kCanaryBytes;
using test::kTestTimeoutS;
using test::pattern;

using test::world_rank;
using test::world_size;

using DeviceBytes = cuda::DeviceBuffer<uint8_t>;

// Zero-byte peers in both directions and one transfer (1 -> 0) of several megabytes.
size_t exchange_size(int sender, int receiver) {
  if ((2 * sender + receiver) % 3 == 1) return 0;
  size_t bytes = 97 * static_cast<size_t>(sender + 1) + 1013 * static_cast<size_t>(receiver);
  if (sender == 1 && receiver == 0) bytes += size_t{3} << 20;
  return bytes;
}

// Device send and receive buffers of one exchange; every receive buffer is followed by canary
// bytes that must stay untouched. The send bytes are written on `producer`, a stream the
// communication stream is told to wait for.
struct DeviceExchange {
  DeviceExchange(NcclCommunicator& comm, int salt, cudaStream_t producer)
      : rank(comm.rank()), salt(salt) {
    for (int r = 0; r < comm.size(); ++r) {
      const size_t out = exchange_size(rank, r), in = exchange_size(r, rank);
      std::vector<uint8_t> bytes(out);
      for (size_t i = 0; i < out; ++i) bytes[i] = pattern(rank, r, i, salt);
      host_send.push_back(bytes);
      send.push_back(std::make_unique<DeviceBytes>(out));
      recv.push_back(std::make_unique<DeviceBytes>(in + kCanaryBytes));
      ADAQP_CUDA_CHECK(cudaMemcpyAsync(send.back()->get(), host_send.back().data(), out,
                                       cudaMemcpyHostToDevice, producer));
      ADAQP_CUDA_CHECK(cudaMemsetAsync(recv.back()->get(), kCanary, in + kCanaryBytes, producer));
      buffers.send.push_back(send.back()->get());
      buffers.send_bytes.push_back(out);
      buffers.recv.push_back(recv.back()->get());
      buffers.recv_bytes.push_back(in);
    }
    comm.stream_wait(producer);
  }

  // Exact content from every peer; the own rank's entry is skipped, so it stays all canary.
  void expect_received() const {
    for (size_t r = 0; r < recv.size(); ++r) {
      const int sender = static_cast<int>(r);
      const size_t n = exchange_size(sender, rank);
      const std::vector<uint8_t> got = recv[r]->download();
      size_t wrong = 0;
      for (size_t i = 0; i < n; ++i) {
        const uint8_t expected = sender == rank ? kCanary : pattern(sender, rank, i, salt);
        if (got[i] != expected) ++wrong;
      }
      EXPECT_EQ(wrong, 0u) << "bytes from rank " << sender << " (salt " << salt << ")";
      for (size_t i = n; i < n + kCanaryBytes; ++i)
        EXPECT_EQ(got[i], kCanary) << "canary " << i - n << " after bytes from rank " << sender;
    }
  }

  int rank;
  int salt;
  std::vector<std::vector<uint8_t>> host_send;
  std::vector<std::unique_ptr<DeviceBytes>> send, recv;
  ExchangeBuffers buffers;
};

// Runs without a GPU too: a device outside the visible ones is a ConfigError on every rank,
// found before any NCCL call.
TEST(NcclCommunicatorSetup, InvalidDeviceIsConfigErrorOnEveryRank) {
  NcclCommunicatorOptions options;
  options.device = 1000;
  try {
    NcclCommunicator comm(MPI_COMM_WORLD, options);
    ADD_FAILURE() << "device 1000 accepted";
  } catch (const ConfigError& e) {
    const std::string expected = "CUDA device 1000 on rank " + std::to_string(world_rank());
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string reason = test::nccl_skip_reason();
    if (!reason.empty()) GTEST_SKIP() << test::kNeedsGpu << reason;
    const int devices = kernels::cuda_device_count();
    device_ = world_rank() % devices;
    ADAQP_CUDA_CHECK(cudaSetDevice(device_));
    stream_ = std::make_unique<cuda::Stream>();
    producer_ = stream_->get();
  }

  std::unique_ptr<NcclCommunicator> make() const {
    NcclCommunicatorOptions options;
    options.device = device_;
    options.timeout_s = kTestTimeoutS;
    return std::make_unique<NcclCommunicator>(MPI_COMM_WORLD, options);
  }

  int device_ = 0;
  std::unique_ptr<cuda::Stream> stream_;
  cudaStream_t producer_ = nullptr;
};

TEST_F(NcclCommunicatorTest, ExchangeMovesExactBytesBetweenDeviceBuffers) {
  auto comm = make();
  DeviceExchange ex(*comm, 1, producer_);
  comm->exchange(ex.buffers, {7})->wait();
  ex.expect_received();
}

TEST_F(NcclCommunicatorTest, TwoExchangesInFlightCompleteInAnyWaitOrder) {
  auto comm = make();
  DeviceExchange first(*comm, 2, producer_);
  DeviceExchange second(*comm, 3, producer_);
  auto w1 = comm->exchange(first.buffers, {1});
  auto w2 = comm->exchange(second.buffers, {2});
  w2->wait();
  EXPECT_TRUE(w1->test());  // the stream completes exchanges in the order they were started
  w1->wait();
  first.expect_received();
  second.expect_received();
}

TEST_F(NcclCommunicatorTest, DeviceAllreduceIsExact) {
  auto comm = make();
  const int size = comm->size(), rank = comm->rank();
  const size_t n = 1000;
  std::vector<float> f(n);
  std::vector<double> d(n);
  std::vector<int64_t> k(n);
  for (size_t i = 0; i < n; ++i) {
    f[i] = static_cast<float>(rank + 1) + 0.5f * static_cast<float>(i);
    d[i] = static_cast<double>(rank) * 1e10 + static_cast<double>(i);
    k[i] = (int64_t{1} << 40) * rank + static_cast<int64_t>(i);
  }
  cuda::DeviceBuffer<float> fd(f);
  cuda::DeviceBuffer<double> dd(d), md(d);
  cuda::DeviceBuffer<int64_t> kd(k);
  comm->allreduce_sum(fd.get(), n);
  comm->allreduce_sum(dd.get(), n);
  comm->allreduce_sum(kd.get(), n);
  comm->allreduce_max(md.get(), n);
  const std::vector<float> f_out = fd.download();
  const std::vector<double> d_out = dd.download(), m_out = md.download();
  const std::vector<int64_t> k_out = kd.download();
  const int64_t rank_sum = int64_t{size} * (size - 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(f_out[i], static_cast<float>(size * (size + 1) / 2) +
                            static_cast<float>(size) * 0.5f * static_cast<float>(i))
        << i;
    ASSERT_EQ(d_out[i], static_cast<double>(rank_sum) * 1e10 + static_cast<double>(size) * i) << i;
    ASSERT_EQ(k_out[i], (int64_t{1} << 40) * rank_sum + size * static_cast<int64_t>(i)) << i;
    ASSERT_EQ(m_out[i], static_cast<double>(size - 1) * 1e10 + static_cast<double>(i)) << i;
  }
}

TEST_F(NcclCommunicatorTest, HostMemoryCollectivesGoThroughMpi) {
  auto comm = make();
  const int size = comm->size(), rank = comm->rank();
  double values[2] = {static_cast<double>(rank + 1), static_cast<double>(rank)};
  comm->allreduce_sum(values, 2);
  EXPECT_EQ(values[0], size * (size + 1) / 2.0);
  EXPECT_EQ(values[1], size * (size - 1) / 2.0);
  int first_failed = 7;
  EXPECT_EQ(any_rank_failed(*comm, rank == size - 1, &first_failed), true);
  EXPECT_EQ(first_failed, size - 1);
  std::vector<int32_t> gathered(static_cast<size_t>(size), -1);
  const int32_t mine = 100 + rank;
  comm->allgather(&mine, gathered.data(), sizeof(mine));
  for (int r = 0; r < size; ++r) EXPECT_EQ(gathered[static_cast<size_t>(r)], 100 + r);
}

TEST_F(NcclCommunicatorTest, DeviceBroadcastAndAllgatherAreExact) {
  auto comm = make();
  const int size = comm->size(), rank = comm->rank(), root = size - 1;
  const size_t bytes = 4099;
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = pattern(rank, root, i, 4);
  DeviceBytes buffer(bytes);
  buffer.upload(data.data());
  comm->broadcast(buffer.get(), bytes, root);
  const std::vector<uint8_t> got = buffer.download();
  for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], pattern(root, root, i, 4)) << i;

  DeviceBytes in(bytes), out(bytes * static_cast<size_t>(size));
  for (size_t i = 0; i < bytes; ++i) data[i] = pattern(rank, 0, i, 5);
  in.upload(data.data());
  comm->allgather(in.get(), out.get(), bytes);
  comm->barrier();
  const std::vector<uint8_t> all = out.download();
  for (int r = 0; r < size; ++r)
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(all[static_cast<size_t>(r) * bytes + i], pattern(r, 0, i, 5)) << r << " " << i;
}

TEST_F(NcclCommunicatorTest, HostExchangesGoThroughMpiAndMixedMemoryIsRejected) {
  auto comm = make();
  std::vector<uint8_t> host(64);
  DeviceBytes device(64);
  EXPECT_THROW(comm->allgather(host.data(), device.get(), 32), InvariantError);
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const int size = comm->size(), rank = comm->rank();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  // Host memory only (e.g. the adaptive scheme's bit-widths): through MPI.
  std::vector<uint8_t> out(16, static_cast<uint8_t>(rank)), in(16, 0xFF);
  ExchangeBuffers h = ExchangeBuffers::none(size);
  h.send[next] = out.data();
  h.send_bytes[next] = out.size();
  h.recv[prev] = in.data();
  h.recv_bytes[prev] = in.size();
  comm->exchange(h, {3})->wait();
  for (uint8_t v : in) ASSERT_EQ(v, prev);
  // Host and device memory in one exchange: refused before anything is enqueued.
  ExchangeBuffers mixed = ExchangeBuffers::none(size);
  mixed.send[next] = host.data();
  mixed.send_bytes[next] = host.size();
  mixed.recv[prev] = device.get();
  mixed.recv_bytes[prev] = 64;
  EXPECT_THROW(comm->exchange(mixed, {0}), InvariantError);
  comm->barrier();  // nothing was enqueued: the communicator still works
}

// The hooks enqueue on the communication stream: every pack before the grouped transfer (it
// writes what is sent), every unpack after it, in rank order (it reads what arrived).
TEST_F(NcclCommunicatorTest, HooksPackBeforeAndUnpackAfterTheGroupedTransfer) {
  auto comm = make();
  const int size = comm->size(), rank = comm->rank();
  ADAQP_REQUIRE_RANKS(size, 2);
  const size_t bytes = 4096;
  std::vector<std::unique_ptr<DeviceBytes>> send, recv, copy;
  ExchangeBuffers b = ExchangeBuffers::none(size);
  for (int r = 0; r < size; ++r) {
    send.push_back(std::make_unique<DeviceBytes>(bytes));
    recv.push_back(std::make_unique<DeviceBytes>(bytes));
    copy.push_back(std::make_unique<DeviceBytes>(bytes));
    if (r == rank) continue;
    b.send[r] = send.back()->get();
    b.send_bytes[r] = bytes;
    b.recv[r] = recv.back()->get();
    b.recv_bytes[r] = bytes;
  }
  std::vector<int> packed, unpacked;
  ExchangeOptions options;
  options.tag = 4;
  options.hooks.pack = [&](int r, int /*piece: one per block*/, void* stream) {
    packed.push_back(r);
    ADAQP_CUDA_CHECK(
        cudaMemsetAsync(send[r]->get(), rank * 16 + r, bytes, static_cast<cudaStream_t>(stream)));
  };
  options.hooks.unpack = [&](int r, int /*piece*/, void* stream) {
    unpacked.push_back(r);
    ADAQP_CUDA_CHECK(cudaMemcpyAsync(copy[r]->get(), recv[r]->get(), bytes,
                                     cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
  };
  auto work = comm->exchange(b, options);
  std::vector<int> peers;
  for (int r = 0; r < size; ++r) {
    if (r != rank) peers.push_back(r);
  }
  std::vector<int> sorted_packed = packed;
  std::sort(sorted_packed.begin(), sorted_packed.end());
  EXPECT_EQ(sorted_packed, peers);
  EXPECT_EQ(unpacked, peers);  // rank order
  work->wait();
  const ExchangeTiming t = work->timing();
  EXPECT_LE(t.started_s, t.completed_s);
  EXPECT_GE(t.codec_s, 0.0);
  for (int r = 0; r < size; ++r) {
    if (r == rank) {
      EXPECT_EQ(t.arrival_s[r], -1.0);
      continue;
    }
    EXPECT_GE(t.arrival_s[r], t.started_s);
    for (uint8_t v : copy[r]->download()) ASSERT_EQ(v, static_cast<uint8_t>(r * 16 + rank));
  }
}

TEST_F(NcclCommunicatorTest, OneRanksSetUpFailureFailsEveryRank) {
  ADAQP_REQUIRE_RANKS(world_size(), 2);
  NcclCommunicatorOptions options;
  options.device = world_rank() == 1 ? -1 : device_;
  try {
    NcclCommunicator comm(MPI_COMM_WORLD, options);
    ADD_FAILURE() << "set-up succeeded although rank 1 has device -1";
  } catch (const ConfigError& e) {
    EXPECT_EQ(world_rank(), 1) << e.what();
  } catch (const CommError& e) {
    EXPECT_NE(world_rank(), 1) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1 failed"), std::string::npos) << e.what();
  }
}

TEST_F(NcclCommunicatorTest, StalledPeerBecomesCommErrorAndUnusableCommunicator) {
  ADAQP_REQUIRE_RANKS(world_size(), 2);
  auto comm = make();
  comm->set_timeout(3.0);  // after set-up, which may take longer on a shared GPU
  if (comm->rank() == 0) {
    // Rank 1 never posts the matching exchange.
    DeviceBytes out(256), in(256);
    ExchangeBuffers buffers;
    buffers.send.assign(static_cast<size_t>(comm->size()), nullptr);
    buffers.send_bytes.assign(static_cast<size_t>(comm->size()), 0);
    buffers.recv.assign(static_cast<size_t>(comm->size()), nullptr);
    buffers.recv_bytes.assign(static_cast<size_t>(comm->size()), 0);
    buffers.send[1] = out.get();
    buffers.send_bytes[1] = 256;
    buffers.recv[1] = in.get();
    buffers.recv_bytes[1] = 256;
    try {
      comm->exchange(buffers, {9})->wait();
      ADD_FAILURE() << "exchange with a silent peer did not fail";
    } catch (const CommError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("timed out after 3 s on rank 0"), std::string::npos) << message;
      EXPECT_NE(message.find("aborted"), std::string::npos) << message;
    }
    cuda::DeviceBuffer<float> value(1);
    try {
      comm->allreduce_sum(value.get(), 1);
      ADD_FAILURE() << "collective on an aborted communicator did not fail";
    } catch (const CommError& e) {
      EXPECT_NE(std::string(e.what()).find("unusable"), std::string::npos) << e.what();
    }
  }
  check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", world_rank());
  comm.reset();  // finalizing next to an aborted peer is bounded by the timeout
}

#else

TEST(NcclCommunicatorTest, RequiresNcclBuild) {
  GTEST_SKIP() << test::kNeedsGpu << "built without NCCL (ADAQP_WITH_NCCL=0)";
}

#endif

}  // namespace
}  // namespace adaqp
