#include "adaqp/comm/solo_work.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "adaqp/common/clock.h"
#include "adaqp/common/timeouts.h"

namespace adaqp {
namespace {

constexpr int kSignTag = 1;
constexpr char kAlive = 1;
constexpr char kDone = 2;
// A sign at least every 5 s, and four within the bound on the silence, so that a late one (a busy
// host) is not taken for a stall.
constexpr double kMaxSignIntervalS = 5.0;
// How often a waiting rank looks for signs and for its own exchange; a gap between two looks
// longer than kOwnPauseS means this process was stopped itself (the whole job suspended, say).
constexpr auto kPoll = std::chrono::milliseconds(5);
constexpr double kOwnPauseS = 1.0;

std::chrono::duration<double> seconds(double s) {
  return std::chrono::duration<double>(s);
}

}  // namespace

SoloWork::SoloWork(Communicator& comm, int root, std::string what)
    : comm_(comm),
      root_(root),
      what_(std::move(what)),
      saved_timeout_s_(comm.timeout()),
      silence_s_(comm.timeout()) {
  try {
    signs_ = comm.host_duplicate();
  } catch (const CommError& e) {
    throw SilentPeerError(root_, fmt::format("{}, as rank {} began {}", e.what(), root_, what_));
  }
  if (signs_ == nullptr) {
    comm_.set_timeout(std::max(saved_timeout_s_, kSoloWorkTimeoutS));
    return;
  }
  heard_s_ = looked_s_ = steady_now_s();
  if (is_root() && comm_.size() > 1) {
    in_flight_.resize(static_cast<size_t>(comm_.size()));
    sent_.assign(static_cast<size_t>(comm_.size()), 0);
    sender_ = std::thread([this] { send_signs(); });
  }
}

SoloWork::~SoloWork() {
  if (is_root() && !finished_) {
    try {
      finish();
    } catch (const std::exception& e) {
      spdlog::debug("rank {}: could not tell the others that {} ended: {}", root_, what_, e.what());
    }
  }
  // finish() joined the sender before anything in it could throw; a joinable std::thread would
  // end the process here.
  if (sender_.joinable()) sender_.join();
  in_flight_.clear();  // signs that never left are cancelled
  next_.reset();       // a sign still expected: its receive is cancelled
  comm_.set_timeout(saved_timeout_s_);
}

void SoloWork::send_signs() {
  const double interval_s = std::min(silence_s_ / 4, kMaxSignIntervalS);
  bool warned = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, seconds(interval_s), [this] { return stop_; })) {
    lock.unlock();
    try {
      send_round(kAlive);
    } catch (const std::exception& e) {
      // The next round tries again: a waiting rank ends the job only after the whole bound.
      if (!warned)
        spdlog::warn("rank {}: a sign of life failed while {}: {}", root_, what_, e.what());
      warned = true;
    }
    lock.lock();
  }
}

void SoloWork::send_round(char sign) {
  for (int r = 0; r < comm_.size(); ++r) {
    if (r == root_) continue;
    std::unique_ptr<Work>& work = in_flight_[static_cast<size_t>(r)];
    if (work != nullptr && !work->test()) continue;
    work.reset();
    char& bytes = sent_[static_cast<size_t>(r)];
    bytes = sign;
    ExchangeBuffers b = ExchangeBuffers::none(comm_.size());
    b.send[r] = &bytes;
    b.send_bytes[r] = 1;
    work = signs_->exchange(b, ExchangeOptions(kSignTag));
  }
}

bool SoloWork::take_signs() {
  while (!done_) {
    if (next_ == nullptr) {
      ExchangeBuffers b = ExchangeBuffers::none(comm_.size());
      b.recv[root_] = &sign_;
      b.recv_bytes[root_] = 1;
      next_ = signs_->exchange(b, ExchangeOptions(kSignTag));
    }
    if (!next_->test()) return false;
    next_.reset();
    heard_s_ = steady_now_s();
    done_ = sign_ == kDone;
  }
  return true;
}

bool SoloWork::silent_too_long() {
  const double now = steady_now_s();
  // Stopped itself, this rank cannot tell the root's silence from its own: a fresh bound.
  if (now - looked_s_ > kOwnPauseS) heard_s_ = now;
  looked_s_ = now;
  return now - heard_s_ > silence_s_;
}

void SoloWork::silent() {
  heard_s_ = looked_s_ = steady_now_s();  // a later call starts a fresh bound
  throw SilentPeerError(
      root_, fmt::format("rank {} heard nothing from rank {} for {:g} s (communication.timeout_s) "
                         "while rank {} was {}: rank {} stalled, or its host cannot be reached",
                         comm_.rank(), root_, silence_s_, root_, what_, root_));
}

void SoloWork::finish() {
  if (finished_) return;
  if (signs_ == nullptr) {
    // No signs: every rank waits for the root here, under kSoloWorkTimeoutS.
    finished_ = true;
    comm_.barrier();
    return;
  }
  if (is_root()) {
    finished_ = true;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    stop_cv_.notify_all();
    if (sender_.joinable()) sender_.join();
    if (in_flight_.empty()) return;  // no other rank
    // The last sign to each peer, after its earlier ones (one tag: they arrive in order).
    for (auto& work : in_flight_) {
      if (work != nullptr) work->wait();
      work.reset();
    }
    send_round(kDone);
    for (auto& work : in_flight_) {
      if (work != nullptr) work->wait();
    }
    return;
  }
  while (!take_signs()) {
    if (silent_too_long()) silent();
    std::this_thread::sleep_for(kPoll);
  }
  finished_ = true;
}

void SoloWork::wait(Work& work) {
  if (signs_ == nullptr) return work.wait();
  while (!work.test()) {
    // The root said it is done while its exchange is still in flight (signs travel apart): the
    // exchange is bounded by the communicator's timeout from here.
    if (take_signs()) return work.wait();
    if (silent_too_long()) silent();
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace adaqp
