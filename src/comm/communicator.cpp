#include "adaqp/comm/communicator.h"

#include <fmt/format.h>

#include "adaqp/common/error.h"

namespace adaqp {

void check_comm_timeout(double seconds) {
  constexpr double kMaxTimeoutS = 1e6;
  if (!(seconds > 0.0 && seconds <= kMaxTimeoutS))
    throw ConfigError(fmt::format("communication timeout must be in (0, {}] seconds, got {}",
                                  kMaxTimeoutS, seconds));
}

ExchangeBuffers ExchangeBuffers::none(int world) {
  ExchangeBuffers b;
  b.send.assign(world, nullptr);
  b.send_bytes.assign(world, 0);
  b.recv.assign(world, nullptr);
  b.recv_bytes.assign(world, 0);
  return b;
}

bool any_rank_failed(Communicator& comm, bool local_failed, int* first_failed) {
  // max over ranks of (size - rank) for the failing ones identifies the lowest failing rank.
  double flag = local_failed ? static_cast<double>(comm.size() - comm.rank()) : 0.0;
  comm.allreduce_max(&flag, 1);
  int lowest = flag > 0.0 ? comm.size() - static_cast<int>(flag) : -1;
  if (first_failed != nullptr) *first_failed = lowest;
  return lowest >= 0;
}

}  // namespace adaqp
