#include "adaqp/comm/thread_communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "host_work.h"

namespace adaqp {

// What the ranks of one process share: a mailbox per (sender, receiver, tag), and the slots of
// the collectives in flight, by sequence number (every rank numbers its collectives alike).
class ThreadWorld {
 public:
  explicit ThreadWorld(int size) : size_(size) {}
  int size() const { return size_; }

  void send(int from, int to, int tag, const void* data, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto* p = static_cast<const uint8_t*>(data);
      boxes_[{from, to, tag}].emplace_back(p, p + bytes);
    }
    cv_.notify_all();
  }

  // Takes the oldest message from `from` to `to` with `tag` into `data` if one has arrived (its
  // size must be `bytes`); false otherwise.
  bool try_receive(int from, int to, int tag, void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = boxes_.find({from, to, tag});
    if (it == boxes_.end() || it->second.empty()) return false;
    std::vector<uint8_t>& m = it->second.front();
    if (m.size() != bytes) {
      throw CommError(fmt::format("rank {} expected {} bytes from rank {} (tag {}), got {}", to,
                                  bytes, from, tag, m.size()));
    }
    std::memcpy(data, m.data(), bytes);
    it->second.pop_front();
    return true;
  }

  // Blocks until something was sent or `deadline` (steady seconds) passed.
  void wait_for_news(double deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    const double left = deadline - steady_now_s();
    if (left > 0) cv_.wait_for(lock, std::chrono::duration<double>(std::min(left, 0.01)));
  }

  // Collective `seq`: every rank deposits `in` (bytes each); once all have, `combine` runs on the
  // contributions in rank order (on every rank, alike) and writes this rank's result.
  void collective(int rank, uint64_t seq, const void* in, size_t bytes, double timeout_s,
                  const char* name,
                  const std::function<void(const std::vector<std::vector<uint8_t>>&)>& combine) {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& slot = slots_[seq];
    if (slot.parts.empty()) slot.parts.resize(size_);
    const auto* p = static_cast<const uint8_t*>(in);
    slot.parts[rank].assign(p, p + bytes);
    ++slot.arrived;
    cv_.notify_all();
    const bool all = cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                  [&] { return slot.arrived == size_; });
    if (!all) {
      throw CommError(fmt::format("{} timed out after {} s on rank {} ({} of {} ranks arrived)",
                                  name, timeout_s, rank, slot.arrived, size_));
    }
    for (const auto& part : slot.parts) {
      if (part.size() != bytes) {
        throw CommError(
            fmt::format("{} on rank {}: ranks contributed different sizes", name, rank));
      }
    }
    combine(slot.parts);
    if (++slot.done == size_) slots_.erase(seq);
  }

 private:
  struct Slot {
    std::vector<std::vector<uint8_t>> parts;
    int arrived = 0;
    int done = 0;
  };

  const int size_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<uint8_t>>> boxes_;
  std::map<uint64_t, Slot> slots_;
};

namespace {

// An exchange in flight: its sends were delivered when it started; its receives are taken from
// the mailboxes (and unpacked) in test() and wait().
class ThreadWork : public HostWork {
 public:
  ThreadWork(ThreadWorld& world, int rank, const ExchangeBuffers& buffers, ExchangeOptions options,
             double timeout_s)
      : HostWork(world.size()),
        world_(world),
        rank_(rank),
        buffers_(buffers),
        options_(std::move(options)),
        timeout_s_(timeout_s),
        received_(static_cast<size_t>(world.size()), 0) {
    timing_.started_s = steady_now_s();
    for (int k = 1; k < world_.size(); ++k) {
      const int peer = (rank_ + k) % world_.size();
      if (buffers_.send_bytes[peer] == 0) continue;
      const auto* data = static_cast<const uint8_t*>(buffers_.send[peer]);
      size_t begin = 0;
      int piece = 0;
      for (size_t end : buffers_.piece_ends(peer, true)) {  // a message per piece
        timing_.codec_s += run_hook(options_.hooks.pack, peer, piece++, nullptr);
        world_.send(rank_, peer, options_.tag, data + begin, end - begin);
        begin = end;
      }
    }
  }

  bool test() override {
    bool done = true;
    for (int peer = 0; peer < world_.size(); ++peer) {
      if (peer == rank_ || buffers_.recv_bytes[peer] == 0 || timing_.arrival_s[peer] >= 0) continue;
      const std::vector<size_t> ends = buffers_.piece_ends(peer, false);
      auto* data = static_cast<uint8_t*>(buffers_.recv[peer]);
      while (received_[peer] < ends.size()) {
        const size_t k = received_[peer];
        const size_t begin = k == 0 ? 0 : ends[k - 1];
        if (!world_.try_receive(peer, rank_, options_.tag, data + begin, ends[k] - begin)) break;
        if (++received_[peer] == ends.size()) timing_.arrival_s[peer] = steady_now_s();
        timing_.codec_s += run_hook(options_.hooks.unpack, peer, static_cast<int>(k), nullptr);
      }
      if (timing_.arrival_s[peer] < 0) done = false;
    }
    if (done && timing_.completed_s == 0) timing_.completed_s = steady_now_s();
    return done;
  }

  void wait() override {
    const double deadline = steady_now_s() + timeout_s_;
    while (!test()) {
      if (steady_now_s() >= deadline) {
        std::vector<int> missing;
        for (int peer = 0; peer < world_.size(); ++peer) {
          if (peer != rank_ && buffers_.recv_bytes[peer] > 0 && timing_.arrival_s[peer] < 0) {
            missing.push_back(peer);
          }
        }
        throw CommError(fmt::format(
            "halo exchange (tag {}) timed out after {} s on rank {}; still waiting for: recv "
            "from [{}]",
            options_.tag, timeout_s_, rank_, fmt::join(missing, ", ")));
      }
      world_.wait_for_news(deadline);
    }
  }

 private:
  ThreadWorld& world_;
  int rank_;
  ExchangeBuffers buffers_;
  ExchangeOptions options_;
  double timeout_s_;
  std::vector<size_t> received_;  // per peer: the pieces received (and unpacked)
};

class ThreadCommunicator : public Communicator {
 public:
  ThreadCommunicator(std::shared_ptr<ThreadWorld> world, int rank, double timeout_s)
      : world_(std::move(world)), rank_(rank), timeout_s_(timeout_s) {
    check_comm_timeout(timeout_s);
  }

  int rank() const override { return rank_; }
  int size() const override { return world_->size(); }

  std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                 const ExchangeOptions& options) override {
    check_exchange_buffers(buffers, size());
    return std::make_unique<ThreadWork>(*world_, rank_, buffers, options, timeout_s_);
  }

  void allreduce_sum(float* data, size_t n) override {
    reduce(data, n, "allreduce_sum", std::plus<float>());
  }
  void allreduce_sum(double* data, size_t n) override {
    reduce(data, n, "allreduce_sum", std::plus<double>());
  }
  void allreduce_sum(int64_t* data, size_t n) override {
    reduce(data, n, "allreduce_sum", std::plus<int64_t>());
  }
  void allreduce_max(double* data, size_t n) override {
    reduce(data, n, "allreduce_max", [](double a, double b) { return std::max(a, b); });
  }

  void broadcast(void* data, size_t bytes, int root) override {
    ADAQP_CHECK(root >= 0 && root < size(), fmt::format("broadcast root {}", root));
    world_->collective(rank_, seq_++, data, bytes, timeout_s_, "broadcast",
                       [&](const std::vector<std::vector<uint8_t>>& parts) {
                         std::memcpy(data, parts[root].data(), bytes);
                       });
  }

  void allgather(const void* in, void* out, size_t bytes) override {
    world_->collective(rank_, seq_++, in, bytes, timeout_s_, "allgather",
                       [&](const std::vector<std::vector<uint8_t>>& parts) {
                         for (size_t r = 0; r < parts.size(); ++r) {
                           std::memcpy(static_cast<uint8_t*>(out) + r * bytes, parts[r].data(),
                                       bytes);
                         }
                       });
  }

  void barrier() override {
    world_->collective(rank_, seq_++, nullptr, 0, timeout_s_, "barrier",
                       [](const std::vector<std::vector<uint8_t>>&) {});
  }

  void set_timeout(double seconds) override {
    check_comm_timeout(seconds);
    timeout_s_ = seconds;
  }
  double timeout() const override { return timeout_s_; }

 private:
  // Elementwise over the ranks' contributions, in rank order (every rank alike).
  template <typename T, typename Op>
  void reduce(T* data, size_t n, const char* name, Op op) {
    world_->collective(rank_, seq_++, data, n * sizeof(T), timeout_s_, name,
                       [&](const std::vector<std::vector<uint8_t>>& parts) {
                         for (size_t i = 0; i < n; ++i) {
                           T acc;
                           std::memcpy(&acc, parts[0].data() + i * sizeof(T), sizeof(T));
                           for (size_t r = 1; r < parts.size(); ++r) {
                             T v;
                             std::memcpy(&v, parts[r].data() + i * sizeof(T), sizeof(T));
                             acc = op(acc, v);
                           }
                           data[i] = acc;
                         }
                       });
  }

  std::shared_ptr<ThreadWorld> world_;
  int rank_;
  double timeout_s_;
  uint64_t seq_ = 0;  // this rank's collectives so far
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_thread_communicators(int size, double timeout_s) {
  ADAQP_CHECK_GE(size, 1, "ranks");
  auto world = std::make_shared<ThreadWorld>(size);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < size; ++r) {
    comms.push_back(std::make_unique<ThreadCommunicator>(world, r, timeout_s));
  }
  return comms;
}

void run_thread_ranks(int size, const std::function<void(Communicator&)>& fn, double timeout_s) {
  std::vector<std::unique_ptr<Communicator>> comms = make_thread_communicators(size, timeout_s);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(*comms[r]);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace adaqp
