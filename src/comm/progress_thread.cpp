#include "adaqp/comm/progress_thread.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "adaqp/common/error.h"

namespace adaqp {

ProgressThread::ProgressThread() : thread_([this] { loop(); }) {}

ProgressThread::~ProgressThread() {
  try {
    wait();
  } catch (const std::exception& e) {
    spdlog::warn("communication task failed during shutdown: {}", e.what());
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void ProgressThread::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ADAQP_CHECK(!in_flight_, "a communication task is already in flight");
    task_ = std::move(task);
    in_flight_ = true;
    running_ = true;
    error_ = nullptr;
  }
  cv_.notify_all();
}

void ProgressThread::wait() {
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!in_flight_) return;
    cv_.wait(lock, [this] { return !running_; });
    in_flight_ = false;
    error = std::exchange(error_, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

bool ProgressThread::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !running_;
}

void ProgressThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || task_ != nullptr; });
    if (task_ == nullptr) return;  // stop_ with nothing left to run
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    lock.unlock();
    std::exception_ptr error;
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    running_ = false;
    cv_.notify_all();
  }
}

}  // namespace adaqp
