// A dedicated thread that drives communication while the calling thread computes. With OpenMPI's
// TCP and shared-memory transports a large message moves only while some thread is inside an MPI
// call, so an exchange overlapped with computation needs a thread that keeps posting and testing
// its requests (docs/design.md, section 4). One task at a time: submit() hands it over, wait()
// blocks until it has finished and rethrows what it threw.
//
// Use with MPI needs at least MPI_THREAD_SERIALIZED: the task and the submitting thread never call
// MPI at the same time as long as the submitting thread makes no MPI call between submit() and
// wait() (see Communicator::allows_progress_thread).
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace adaqp {

class ProgressThread {
 public:
  ProgressThread();
  // Waits for the task in flight (its exception is logged, not thrown), then joins the thread.
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  // Runs `task` on the thread. InvariantError if a task is still in flight (not waited for).
  void submit(std::function<void()> task);
  // Blocks until the submitted task has finished; rethrows its exception. No-op when none is in
  // flight.
  void wait();
  // True when no task is running (never blocks): wait() would return at once.
  bool idle();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool in_flight_ = false;  // submitted and not yet waited for
  bool running_ = false;    // the thread has taken the task and not finished it
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace adaqp
