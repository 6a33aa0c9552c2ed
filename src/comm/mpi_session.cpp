#include "adaqp/comm/mpi_session.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>

#include "adaqp/comm/host_of.h"
#include "adaqp/comm/mpi_error.h"
#include "adaqp/common/error.h"
#include "adaqp/common/wait_bound.h"

namespace adaqp {
namespace {

// How often the watch of MPI_Finalize looks (well under WaitBound's kOwnPauseS).
constexpr std::chrono::milliseconds kFinalizeLook{50};

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized", -1);
  if (initialized) throw InvariantError("MpiSession: MPI is already initialised");
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread", -1);
  try {
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank", -1);
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
              rank_);
  } catch (...) {
    MPI_Finalize();
    throw;
  }
}

MpiSession::~MpiSession() {
  std::mutex mutex;
  std::condition_variable finalized;
  bool done = false;
  std::thread watch;
  try {
    watch = std::thread([&, seconds = end_timeout_s_.load()] {
      WaitBound bound(seconds);
      std::unique_lock<std::mutex> lock(mutex);
      while (!finalized.wait_for(lock, kFinalizeLook, [&] { return done; })) {
        if (!bound.passed()) continue;
        std::fprintf(stderr,
                     "adaqp: error: MPI_Finalize on rank %d (host %s) still waits for the job's "
                     "other processes after %g s (communication.timeout_s): one of them stopped, "
                     "died or was cut off as the job ended\n",
                     rank_, host_name().c_str(), seconds);
        std::fflush(nullptr);
        std::_Exit(1);
      }
    });
  } catch (const std::system_error& e) {
    spdlog::warn("MPI_Finalize unwatched (no thread: {}): a stalled peer can hold it", e.what());
  }
  const int code = MPI_Finalize();
  if (watch.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    finalized.notify_one();
    watch.join();
  }
  if (code != MPI_SUCCESS) spdlog::error("MPI_Finalize failed: {}", mpi_error_string(code));
}

}  // namespace adaqp
