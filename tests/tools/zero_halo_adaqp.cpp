// adaqp_zero_halo: the adaqp command line whose training jobs receive zeros in place of every halo
// message (rows and gradients, full precision or quantized: all-zero bytes decode to zero rows).
// The negative control of tests/cli/accuracy_sensitive.sh: a job trained by it learns from its own
// nodes alone, so an accuracy test that cannot tell it from real training has no teeth. A test
// binary, not a mode of adaqp; host transports only.
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "adaqp/cli/command_line.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/common/error.h"
#include "forwarding_communicator.h"

namespace adaqp {
namespace {

void zero(void* data, size_t begin, size_t end) {
  std::memset(static_cast<char*>(data) + begin, 0, end - begin);
}

// Zeroes every receive buffer once the exchange has completed (for exchanges without unpack hooks,
// whose bytes are the rows themselves).
class ZeroedWork : public Work {
 public:
  ZeroedWork(std::unique_ptr<Work> inner, const ExchangeBuffers& buffers)
      : inner_(std::move(inner)), recv_(buffers.recv), recv_bytes_(buffers.recv_bytes) {}

  bool test() override {
    if (!inner_->test()) return false;
    zero_once();
    return true;
  }
  void wait() override {
    inner_->wait();
    zero_once();
  }
  ExchangeTiming timing() override { return inner_->timing(); }

 private:
  void zero_once() {
    if (zeroed_) return;
    for (size_t r = 0; r < recv_.size(); ++r)
      if (recv_[r] != nullptr) zero(recv_[r], 0, recv_bytes_[r]);
    zeroed_ = true;
  }

  std::unique_ptr<Work> inner_;
  std::vector<void*> recv_;
  std::vector<size_t> recv_bytes_;
  bool zeroed_ = false;
};

// Forwards everything to the job's transport; exchanges deliver zeros.
class ZeroHaloCommunicator : public test::ForwardingCommunicator {
 public:
  explicit ZeroHaloCommunicator(Communicator& inner) : ForwardingCommunicator(inner) {
    if (inner.device_memory())
      throw ConfigError("adaqp_zero_halo: host transports only (training.device=cpu)");
  }

  std::unique_ptr<Work> exchange(const ExchangeBuffers& buffers,
                                 const ExchangeOptions& options) override {
    ExchangeOptions zeroing = options;
    if (options.hooks.unpack) {
      // A piece is zeroed after it has arrived and before it is decoded.
      zeroing.hooks.unpack = [buffers, unpack = options.hooks.unpack](int peer, int piece,
                                                                      void* stream) {
        const std::vector<size_t> ends = buffers.piece_ends(peer, /*send=*/false);
        const size_t p = static_cast<size_t>(piece);
        zero(buffers.recv[static_cast<size_t>(peer)], p == 0 ? 0 : ends[p - 1], ends[p]);
        unpack(peer, piece, stream);
      };
    }
    return std::make_unique<ZeroedWork>(inner_.exchange(buffers, zeroing), buffers);
  }
};

}  // namespace
}  // namespace adaqp

int main(int argc, char** argv) {
  adaqp::cli::exit_after_run(adaqp::cli::run(argc, argv, [](adaqp::Communicator& inner) {
    return std::make_unique<adaqp::ZeroHaloCommunicator>(inner);
  }));
}
