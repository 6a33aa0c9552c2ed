// A Communicator that passes every call on to another: tests derive from it to watch or change one
// kind of call (an exchange, mostly) of the transport they wrap. Like every wrapper it offers no
// host_duplicate (communicator.h), so a policy over it solves on the epoch's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "adaqp/comm/communicator.h"

namespace adaqp::test {

class ForwardingCommunicator : public Communicator {
 public:
  explicit ForwardingCommunicator(Communicator& inner) : inner_(inner) {}

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                 const ExchangeOptions& options) override {
    return inner_.exchange(buffers, options);
  }
  void allreduce_sum(float* data, size_t n) override { inner_.allreduce_sum(data, n); }
  void allreduce_sum(double* data, size_t n) override { inner_.allreduce_sum(data, n); }
  void allreduce_sum(int64_t* data, size_t n) override { inner_.allreduce_sum(data, n); }
  void allreduce_max(double* data, size_t n) override { inner_.allreduce_max(data, n); }
  void broadcast(void* data, size_t bytes, int root) override {
    inner_.broadcast(data, bytes, root);
  }
  void allgather(const void* in, void* out, size_t bytes) override {
    inner_.allgather(in, out, bytes);
  }
  void barrier() override { inner_.barrier(); }
  void set_timeout(double seconds) override { inner_.set_timeout(seconds); }
  double timeout() const override { return inner_.timeout(); }
  bool allows_progress_thread() const override { return inner_.allows_progress_thread(); }
  bool device_memory() const override { return inner_.device_memory(); }

 protected:
  Communicator& inner_;
};

}  // namespace adaqp::test
