#include "adaqp/comm/signs.h"

#include <algorithm>
#include <exception>

#include "adaqp/common/clock.h"
#include "adaqp/common/wait_bound.h"

namespace adaqp::signs {
namespace {

constexpr int kSignTag = 1;
constexpr double kMaxIntervalS = 5.0;

}  // namespace

double interval_s(double silence_s) {
  return std::min(silence_s / 4, kMaxIntervalS);
}

Sender::Sender(Communicator& signs)
    : signs_(signs),
      in_flight_(static_cast<size_t>(signs.size())),
      bytes_(static_cast<size_t>(signs.size()), 0) {}

bool Sender::send(int peer, char sign) {
  std::unique_ptr<Work>& work = in_flight_[static_cast<size_t>(peer)];
  if (work != nullptr && !work->test()) return false;
  work.reset();
  char& bytes = bytes_[static_cast<size_t>(peer)];
  bytes = sign;
  ExchangeBuffers b = ExchangeBuffers::none(signs_.size());
  b.send[peer] = &bytes;
  b.send_bytes[peer] = 1;
  work = signs_.exchange(b, ExchangeOptions(kSignTag));
  return true;
}

void Sender::round(char sign) {
  // Every peer gets its sign even where one before it failed; the first failure is thrown after.
  std::exception_ptr failed;
  for (int r = 0; r < signs_.size(); ++r) {
    if (r == signs_.rank()) continue;
    try {
      send(r, sign);
    } catch (const std::exception&) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

void Sender::drain() {
  for (auto& work : in_flight_) {
    if (work != nullptr) work->wait();
    work.reset();
  }
}

Receiver::Receiver(Communicator& signs, int peer) : signs_(signs), peer_(peer) {}

char Receiver::take() {
  if (done_) return 0;
  if (next_ == nullptr) {
    ExchangeBuffers b = ExchangeBuffers::none(signs_.size());
    b.recv[peer_] = &sign_;
    b.recv_bytes[peer_] = 1;
    next_ = signs_.exchange(b, ExchangeOptions(kSignTag));
  }
  if (!next_->test()) return 0;
  next_.reset();
  done_ = sign_ == kDone;
  return sign_;
}

Silence::Silence() : heard_s_(steady_now_s()), looked_s_(heard_s_) {}

void Silence::heard() {
  heard_s_ = steady_now_s();
}

bool Silence::past(double bound_s) {
  const double now = steady_now_s();
  if (now - looked_s_ > kOwnPauseS) heard_s_ = now;
  looked_s_ = now;
  return now - heard_s_ > bound_s;
}

}  // namespace adaqp::signs
