// Personalised all-to-all of typed vectors over a Communicator (host buffers): what the start-up's
// distributed steps (graph slices, the distributed partitioner, part building) exchange.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "adaqp/comm/communicator.h"

namespace adaqp {

// out[r] = what rank r sent this rank (send[rank] stays local, copied). Collective: every rank
// calls it with comm.size() lists and the same tag. Two exchanges: the counts, then the data.
template <typename T>
std::vector<std::vector<T>> all_to_all(Communicator& comm, const std::vector<std::vector<T>>& send,
                                       int tag) {
  static_assert(std::is_trivially_copyable_v<T>, "all_to_all moves raw bytes");
  const int world = comm.size(), me = comm.rank();
  std::vector<int64_t> sizes_out(world), sizes_in(world, 0);
  ExchangeBuffers counts = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    sizes_out[r] = static_cast<int64_t>(send[r].size());
    if (r == me) continue;
    counts.send[r] = &sizes_out[r];
    counts.send_bytes[r] = sizeof(int64_t);
    counts.recv[r] = &sizes_in[r];
    counts.recv_bytes[r] = sizeof(int64_t);
  }
  comm.exchange(counts, ExchangeOptions(tag))->wait();
  std::vector<std::vector<T>> out(world);
  ExchangeBuffers data = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    if (r == me) {
      out[r] = send[r];
      continue;
    }
    out[r].resize(static_cast<size_t>(sizes_in[r]));
    data.send[r] = send[r].data();
    data.send_bytes[r] = send[r].size() * sizeof(T);
    data.recv[r] = out[r].data();
    data.recv_bytes[r] = out[r].size() * sizeof(T);
  }
  comm.exchange(data, ExchangeOptions(tag))->wait();
  return out;
}

}  // namespace adaqp
