// Signs of life under real mpirun with real signals. One rank's long work waited for
// (comm/solo_work.h): the others wait past the communicator's timeout while the root works; a root
// stopped with SIGSTOP is named within the bound; a job stopped whole for longer than the bound and
// continued goes on, and so do its ranks' waits in a collective or an exchange. All ranks' work
// together watched (comm/peer_watch.h): ranks busy past the timeout go on; a stopped rank is named
// within the bound while the others are held in a wait of MPI's own.
#include <gtest/gtest.h>
#include <mpi.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/peer_watch.h"
#include "adaqp/comm/solo_work.h"
#include "adaqp/common/clock.h"
#include "adaqp/common/timeouts.h"
#include "mpi_skip.h"

// MPI_Query_thread answering MPI_THREAD_SERIALIZED while a test asks (MPI's profiling interface:
// this definition takes the name, the library's stays reachable as PMPI_Query_thread), for the
// communicators of an MPI without MPI_THREAD_MULTIPLE.
namespace {
std::atomic<bool> report_serialized{false};
}  // namespace

extern "C" int MPI_Query_thread(int* provided) {
  const int code = PMPI_Query_thread(provided);
  if (report_serialized) *provided = MPI_THREAD_SERIALIZED;
  return code;
}

namespace adaqp {
namespace {

constexpr int kTag = 7;

// Duplicated under a long bound (a rank of a loaded host can come to the duplicate more than a
// short bound after the others), then `timeout_s`.
std::unique_ptr<MpiCommunicator> solo_world(double timeout_s) {
  MpiCommunicatorOptions options;
  options.timeout_s = 30;
  auto comm = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, options);
  comm->set_timeout(timeout_s);
  return comm;
}

// Every rank's process id.
std::vector<pid_t> rank_pids(Communicator& comm) {
  const int64_t own = getpid();
  std::vector<int64_t> all(static_cast<size_t>(comm.size()));
  comm.allgather(&own, all.data(), sizeof own);
  return std::vector<pid_t>(all.begin(), all.end());
}

void solo_sleep_s(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Ranks telling one rank that they have reached a point (seen a stopped rank's silence, begun a
// wait), so that it waits for all of them instead of a guessed time (a loaded host can be late by
// more): a real-time signal each (those queue; two ordinary ones sent at once can arrive as one),
// outside the MPI communicators under test.
std::atomic<int> ranks_told{0};

void count_told(int) {
  ++ranks_told;
}

class Telling {
 public:
  Telling() {
    ranks_told = 0;
    struct sigaction action = {};
    action.sa_handler = count_told;
    action.sa_flags = SA_RESTART;  // any thread may take it, Open MPI's too
    sigemptyset(&action.sa_mask);
    sigaction(SIGRTMIN + 1, &action, &previous_);
  }
  ~Telling() { sigaction(SIGRTMIN + 1, &previous_, nullptr); }
  Telling(const Telling&) = delete;
  Telling& operator=(const Telling&) = delete;

  static void tell(pid_t waiter) { EXPECT_EQ(sigqueue(waiter, SIGRTMIN + 1, sigval{}), 0); }
  // Until `ranks` have told (at most 20 s: then the test's own checks fail).
  static void await(int ranks) {
    const double start = steady_now_s();
    while (ranks_told.load() < ranks && steady_now_s() - start < 20) solo_sleep_s(0.01);
    EXPECT_EQ(ranks_told.load(), ranks);
  }

 private:
  struct sigaction previous_ = {};
};

// A world whose ranks know each other's process ids, its bound on the silence then `bound_s`.
struct SignalledWorld {
  explicit SignalledWorld(double bound_s) : comm(solo_world(30)), pid(rank_pids(*comm)) {
    comm->set_timeout(bound_s);
  }
  // The ranks in step again, under a generous bound, before the next test.
  ~SignalledWorld() {
    comm->set_timeout(30);
    comm->barrier();
  }
  Telling telling;  // before the process ids are known to any peer
  std::unique_ptr<MpiCommunicator> comm;
  std::vector<pid_t> pid;
};

// A process of its own suspends the job as a scheduler would, for twice a bound of 1.5 s, and
// continues rank 0 0.3 s after the others; -1 where it cannot be started. Called on rank 0.
pid_t suspend_job(const std::vector<pid_t>& pid) {
  const pid_t suspender = fork();
  if (suspender == 0) {
    for (pid_t p : pid) kill(p, SIGSTOP);
    const timespec pause{3, 0}, stagger{0, 300000000};
    nanosleep(&pause, nullptr);
    for (size_t r = 1; r < pid.size(); ++r) kill(pid[r], SIGCONT);
    nanosleep(&stagger, nullptr);
    kill(pid[0], SIGCONT);
    _exit(0);
  }
  return suspender;
}

// The job suspended while ranks 1.. wait for rank 0 in `wait` (rank 0 joins it once continued,
// last): on their wake they wait on for it (common/wait_bound.h), their bound not yet used.
void stop_the_job_during(const SignalledWorld& world, const std::function<void()>& wait) {
  const double start = steady_now_s();
  if (world.comm->rank() == 0) {
    Telling::await(world.comm->size() - 1);  // the others are about to wait
    solo_sleep_s(0.1);                       // and are in their wait
    const pid_t suspender = suspend_job(world.pid);
    ASSERT_GE(suspender, 0);
    int status = 0;
    ASSERT_EQ(waitpid(suspender, &status, 0), suspender);
  } else {
    Telling::tell(world.pid[0]);
  }
  EXPECT_NO_THROW(wait());
  if (world.comm->rank() != 0) {
    EXPECT_GE(steady_now_s() - start, 3.0);  // it was stopped
  }
}

TEST(StoppedJob, ACollectiveWaitedInGoesOn) {
  const SignalledWorld world(1.5);
  ADAQP_REQUIRE_RANKS(world.comm->size(), 2);
  stop_the_job_during(world, [&] { world.comm->barrier(); });
}

TEST(StoppedJob, AnExchangeWaitedInGoesOn) {
  const SignalledWorld world(1.5);
  Communicator& comm = *world.comm;
  ADAQP_REQUIRE_RANKS(comm.size(), 2);
  const int64_t sent = 4242;
  int64_t got = 0;
  ExchangeBuffers b = ExchangeBuffers::none(comm.size());
  if (comm.rank() == 0) {
    for (int r = 1; r < comm.size(); ++r) {
      b.send[r] = &sent;
      b.send_bytes[r] = sizeof sent;
    }
  } else {
    b.recv[0] = &got;
    b.recv_bytes[0] = sizeof got;
  }
  stop_the_job_during(world, [&] { comm.exchange(b, ExchangeOptions(kTag))->wait(); });
  if (comm.rank() != 0) {
    EXPECT_EQ(got, sent);
  }
}

TEST(SoloWork, OthersWaitPastTheTimeoutWhileTheRootShowsSignsOfLife) {
  auto comm = solo_world(1.0);
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  {
    SoloWork solo(*comm, 0, "testing");
    ASSERT_TRUE(solo.watched());
    const int64_t sent = 4242;
    int64_t got = 0;
    ExchangeBuffers b = ExchangeBuffers::none(comm->size());
    if (solo.is_root()) {
      solo_sleep_s(2.5);  // the work: well past the communicator's timeout
      for (int r = 1; r < comm->size(); ++r) {
        b.send[r] = &sent;
        b.send_bytes[r] = sizeof sent;
      }
      comm->exchange(b, ExchangeOptions(kTag))->wait();
    } else {
      b.recv[0] = &got;
      b.recv_bytes[0] = sizeof got;
      EXPECT_NO_THROW(solo.wait(*comm->exchange(b, ExchangeOptions(kTag))));
      EXPECT_EQ(got, sent);
    }
    EXPECT_NO_THROW(solo.finish());
  }
  EXPECT_EQ(comm->timeout(), 1.0);  // restored
  comm->barrier();
}

TEST(SoloWork, AStoppedRootIsNamedWithinTheBound) {
  const SignalledWorld world(1.5);
  Communicator* comm = world.comm.get();
  const std::vector<pid_t>& pid = world.pid;
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  {
    SoloWork solo(*comm, 0, "testing");
    if (solo.is_root()) {
      solo_sleep_s(4.0);  // stopped from 0.3 s to at least 1.5 s later by rank 1
      solo.finish();
    } else {
      solo_sleep_s(0.3);
      double stopped_s = 0;
      if (comm->rank() == 1) {
        ASSERT_EQ(kill(pid[0], SIGSTOP), 0);
        stopped_s = steady_now_s();
      }
      try {
        solo.finish();
        ADD_FAILURE() << "no SilentPeerError while rank 0 was stopped";
      } catch (const SilentPeerError& e) {
        EXPECT_EQ(e.peer(), 0);
        EXPECT_NE(std::string(e.what()).find("heard nothing from rank 0 for 1.5 s "
                                             "(communication.timeout_s) while rank 0 was testing"),
                  std::string::npos)
            << e.what();
        if (comm->rank() != 1) Telling::tell(pid[1]);
      }
      if (comm->rank() == 1) {
        const double waited_s = steady_now_s() - stopped_s;
        EXPECT_GE(waited_s, 1.5 - 0.4);  // the last sign came at most one interval before
        EXPECT_LE(waited_s, 3.0);
        Telling::await(comm->size() - 2);  // every other rank has seen the silence too
        ASSERT_EQ(kill(pid[0], SIGCONT), 0);
      }
      // The root resumed: its signs and its end are taken, none left to a later communicator.
      EXPECT_NO_THROW(solo.finish());
    }
  }
}

TEST(SoloWork, AJobStoppedWholeLongerThanTheBoundGoesOn) {
  const SignalledWorld world(1.5);
  Communicator* comm = world.comm.get();
  const std::vector<pid_t>& pid = world.pid;
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  {
    SoloWork solo(*comm, 0, "testing");
    if (solo.is_root()) {
      // Continued 0.3 s after the waiting ranks: they wake to no sign at all.
      const pid_t suspender = suspend_job(pid);
      ASSERT_GE(suspender, 0);
      solo_sleep_s(4.0);
      int status = 0;
      ASSERT_EQ(waitpid(suspender, &status, 0), suspender);
      solo.finish();
    } else {
      EXPECT_NO_THROW(solo.finish());
    }
  }
}

TEST(SoloWork, WithoutSignsEveryRankWaitsForTheRootUnderTheLongBound) {
  report_serialized = true;
  auto comm = solo_world(0.5);
  report_serialized = false;
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  {
    SoloWork solo(*comm, 0, "testing");
    EXPECT_FALSE(solo.watched());
    EXPECT_EQ(comm->timeout(), kSoloWorkTimeoutS);
    if (solo.is_root()) solo_sleep_s(2.0);
    EXPECT_NO_THROW(solo.finish());
  }
  EXPECT_EQ(comm->timeout(), 0.5);
  comm->barrier();  // the agreement after a step: every rank is past the root's work
}

// Each rank's "work": asleep for its own time, the longest past the bound.
TEST(PeerWatch, RanksBusyPastTheTimeoutGoOn) {
  auto comm = solo_world(1.0);
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  std::atomic<int> silences{0};
  {
    PeerWatch watch(*comm, "testing", [&](const SilentPeerError&) { ++silences; });
    ASSERT_TRUE(watch.watched());
    solo_sleep_s(0.4 + 1.2 * comm->rank());
    EXPECT_NO_THROW(watch.finish());
  }
  EXPECT_EQ(silences.load(), 0);
  comm->barrier();
}

// Rank 1 stopped while the others wait in MPI_Barrier, a wait the watch has no hand in: their
// watches name it; rank 0's continues it, which lets the barrier end.
TEST(PeerWatch, AStoppedRankIsNamedWhileTheOthersAreHeldInAForeignWait) {
  const SignalledWorld world(1.5);
  Communicator* comm = world.comm.get();
  const std::vector<pid_t>& pid = world.pid;
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  const int rank = comm->rank();
  std::atomic<int> silences{0};
  std::atomic<int> silent_peer{-1};
  double stopped_s = 0, named_s = 0;
  {
    PeerWatch watch(*comm, "the ranks were testing", [&](const SilentPeerError& e) {
      named_s = steady_now_s();
      silent_peer = e.peer();
      ++silences;
      EXPECT_NE(std::string(e.what()).find("heard nothing from rank 1 for 1.5 s "
                                           "(communication.timeout_s) while the ranks were "
                                           "testing: rank 1 stalled"),
                std::string::npos)
          << e.what();
      if (rank == 0) {
        Telling::await(comm->size() - 2);  // every other rank has seen the silence too
        kill(pid[1], SIGCONT);
      } else {
        Telling::tell(pid[0]);
      }
    });
    if (rank == 0) {
      solo_sleep_s(0.3);
      ASSERT_EQ(kill(pid[1], SIGSTOP), 0);
      stopped_s = steady_now_s();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
      EXPECT_NO_THROW(watch.finish());  // stopped itself: a fresh bound for the others on its wake
    } else {
      EXPECT_THROW(watch.finish(), SilentPeerError);
      // Rank 1 resumed: its signs and its end are taken, none left to a later communicator.
      EXPECT_NO_THROW(watch.finish());
    }
  }
  if (rank == 1) {
    EXPECT_EQ(silences.load(), 0);
  } else {
    EXPECT_EQ(silences.load(), 1);
    EXPECT_EQ(silent_peer.load(), 1);
  }
  if (rank == 0) {
    const double waited_s = named_s - stopped_s;
    EXPECT_GE(waited_s, 1.5 - 0.4);  // the last sign came at most one interval before
    EXPECT_LE(waited_s, 3.0);
  }
}

TEST(PeerWatch, WithoutSignsNothingIsWatched) {
  report_serialized = true;
  auto comm = solo_world(0.5);
  report_serialized = false;
  ADAQP_REQUIRE_RANKS(comm->size(), 2);
  {
    PeerWatch watch(*comm, "testing", [](const SilentPeerError&) {});
    EXPECT_FALSE(watch.watched());
    EXPECT_NO_THROW(watch.finish());
  }
  comm->barrier();
}

}  // namespace
}  // namespace adaqp
