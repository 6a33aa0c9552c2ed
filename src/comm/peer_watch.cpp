#include "adaqp/comm/peer_watch.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <utility>

#include "adaqp/common/clock.h"

namespace adaqp {
namespace {

// How often the watch looks for signs: the bound is seconds, and a gap of a second between two
// looks is taken for this process's own pause.
constexpr auto kLook = std::chrono::milliseconds(20);

}  // namespace

PeerWatch::PeerWatch(Communicator& comm, std::string what, OnSilence on_silence)
    : comm_(comm),
      what_(std::move(what)),
      on_silence_(std::move(on_silence)),
      silence_s_(comm.timeout()) {
  if (comm_.size() > 1) signs_ = comm_.host_duplicate();
  if (signs_ == nullptr) return;
  const auto n = static_cast<size_t>(comm_.size());
  const auto me = static_cast<size_t>(comm_.rank());
  sender_ = std::make_unique<signs::Sender>(*signs_);
  receivers_.resize(n);
  for (size_t r = 0; r < n; ++r) {
    if (r != me) receivers_[r] = std::make_unique<signs::Receiver>(*signs_, static_cast<int>(r));
  }
  silence_.resize(n);
  peer_done_.assign(n, 0);
  told_done_.assign(n, 0);
  peer_done_[me] = told_done_[me] = 1;
  next_sign_s_ = steady_now_s();
  thread_ = std::thread([this] { watch(); });
}

PeerWatch::~PeerWatch() {
  if (signs_ == nullptr || finished_) return;
  if (thread_.joinable()) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  try {
    // After the signs already sent (one tag: they arrive in order), so that the others stop
    // watching this rank rather than take its end for a stall.
    sender_->drain();
    for (size_t r = 0; r < told_done_.size(); ++r) {
      if (!told_done_[r]) sender_->send(static_cast<int>(r), signs::kDone);
    }
    sender_->drain();
  } catch (const std::exception& e) {
    spdlog::debug("rank {}: could not tell the others that {} ended here: {}", comm_.rank(), what_,
                  e.what());
  }
}

void PeerWatch::watch() {
  bool warned = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    const bool finishing = finishing_;
    lock.unlock();
    try {
      if (look(finishing)) {
        lock.lock();
        break;
      }
    } catch (const SilentPeerError& e) {
      found_ = e;
      on_silence_(e);
      lock.lock();
      break;
    } catch (const std::exception& e) {
      // A sign that failed: the next look tries again, and a peer that stays silent is found.
      if (!warned)
        spdlog::warn("rank {}: a sign of life failed while {}: {}", comm_.rank(), what_, e.what());
      warned = true;
    }
    lock.lock();
    cv_.wait_for(lock, kLook, [&] { return stop_ || finishing_ != finishing; });
  }
  over_ = true;
  cv_.notify_all();
}

bool PeerWatch::look(bool finishing) {
  const double now = steady_now_s();
  // A sign that fails is reported after the peers' signs are taken: a send failing every time
  // must not keep this rank from finding a silent peer.
  std::exception_ptr failed;
  try {
    if (finishing) {
      for (size_t r = 0; r < told_done_.size(); ++r) {
        if (!told_done_[r] && sender_->send(static_cast<int>(r), signs::kDone)) told_done_[r] = 1;
      }
    } else if (now >= next_sign_s_) {
      next_sign_s_ = now + signs::interval_s(silence_s_);
      sender_->round(signs::kAlive);
    }
  } catch (const std::exception&) {
    failed = std::current_exception();
  }
  bool over = finishing;
  for (size_t r = 0; r < receivers_.size(); ++r) {
    if (peer_done_[r]) continue;
    for (char sign = receivers_[r]->take(); sign != 0; sign = receivers_[r]->take()) {
      silence_[r].heard();
      if (sign == signs::kDone) peer_done_[r] = 1;
    }
    if (peer_done_[r]) continue;
    over = false;
    if (silence_[r].past(silence_s_)) {
      throw SilentPeerError(
          static_cast<int>(r),
          fmt::format("rank {} heard nothing from rank {} for {:g} s (communication.timeout_s) "
                      "while {}: rank {} stalled, or its host cannot be reached",
                      comm_.rank(), r, silence_s_, what_, r));
    }
  }
  if (failed) std::rethrow_exception(failed);
  for (const char told : told_done_) over = over && told != 0;
  return over;
}

void PeerWatch::finish() {
  if (signs_ == nullptr || finished_) return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    finishing_ = true;
    if (!thread_.joinable()) {
      // An earlier call met a silence: the watch again, with fresh bounds.
      for (signs::Silence& s : silence_) s = signs::Silence();
      found_.reset();
      over_ = false;
      thread_ = std::thread([this] { watch(); });
    }
    cv_.notify_all();
    cv_.wait(lock, [this] { return over_; });
  }
  thread_.join();
  if (found_) throw *found_;
  sender_->drain();
  finished_ = true;
}

}  // namespace adaqp
