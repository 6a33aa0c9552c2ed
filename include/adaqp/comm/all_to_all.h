// Personalised all-to-all of typed vectors over a Communicator (host buffers): what the start-up's
// distributed steps (graph slices, the distributed partitioner, part building) exchange.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "adaqp/comm/communicator.h"

namespace adaqp {

// What a rank received: the lists of all ranks concatenated in rank order, in one buffer (no
// per-sender copies: the start-up moves a slice's edges through these).
template <typename T>
struct Received {
  std::vector<T> data;
  std::vector<size_t> offsets;  // world + 1: rank r's list is data[offsets[r], offsets[r + 1])
};

// What each rank sent this rank: send[r] goes to rank r (send[rank] is copied locally).
// Collective: every rank calls it with comm.size() lists and the same tag. Two exchanges: the
// counts, then the data.
template <typename T>
Received<T> all_to_all(Communicator& comm, const std::vector<std::vector<T>>& send, int tag) {
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
  sizes_in[me] = sizes_out[me];
  Received<T> out;
  out.offsets.assign(static_cast<size_t>(world) + 1, 0);
  for (int r = 0; r < world; ++r) out.offsets[r + 1] = out.offsets[r] + sizes_in[r];
  out.data.resize(out.offsets[world]);
  std::copy(send[me].begin(), send[me].end(), out.data.begin() + out.offsets[me]);
  ExchangeBuffers data = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    if (r == me) continue;
    data.send[r] = send[r].data();
    data.send_bytes[r] = send[r].size() * sizeof(T);
    data.recv[r] = out.data.data() + out.offsets[r];
    data.recv_bytes[r] = static_cast<size_t>(sizes_in[r]) * sizeof(T);
  }
  comm.exchange(data, ExchangeOptions(tag))->wait();
  return out;
}

}  // namespace adaqp
