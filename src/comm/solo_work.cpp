#include "adaqp/comm/solo_work.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "adaqp/common/timeouts.h"

namespace adaqp {
namespace {

// How often a waiting rank looks for signs and for its own exchange.
constexpr auto kPoll = std::chrono::milliseconds(5);

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
  silence_ = signs::Silence();
  if (!is_root()) {
    receiver_ = std::make_unique<signs::Receiver>(*signs_, root_);
  } else if (comm_.size() > 1) {
    sender_ = std::make_unique<signs::Sender>(*signs_);
    sending_ = std::thread([this] { send_signs(); });
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
  // finish() joined the sending thread before anything in it could throw; a joinable std::thread
  // would end the process here.
  if (sending_.joinable()) sending_.join();
  sender_.reset();    // signs that never left are cancelled
  receiver_.reset();  // a sign still expected: its receive is cancelled
  comm_.set_timeout(saved_timeout_s_);
}

void SoloWork::send_signs() {
  const double interval_s = signs::interval_s(silence_s_);
  bool warned = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::duration<double>(interval_s),
                            [this] { return stop_; })) {
    lock.unlock();
    try {
      sender_->round(signs::kAlive);
    } catch (const std::exception& e) {
      // The next round tries again: a waiting rank ends the job only after the whole bound.
      if (!warned)
        spdlog::warn("rank {}: a sign of life failed while {}: {}", root_, what_, e.what());
      warned = true;
    }
    lock.lock();
  }
}

bool SoloWork::take_signs() {
  while (!done_) {
    const char sign = receiver_->take();
    if (sign == 0) return false;
    silence_.heard();
    done_ = sign == signs::kDone;
  }
  return true;
}

void SoloWork::silent() {
  silence_ = signs::Silence();  // a later call starts a fresh bound
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
    if (sending_.joinable()) sending_.join();
    if (sender_ == nullptr) return;  // no other rank
    // The last sign to each peer, after its earlier ones (one tag: they arrive in order).
    sender_->drain();
    sender_->round(signs::kDone);
    sender_->drain();
    return;
  }
  while (!take_signs()) {
    if (silence_.past(silence_s_)) silent();
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
    if (silence_.past(silence_s_)) silent();
    std::this_thread::sleep_for(kPoll);
  }
}

}  // namespace adaqp
