#include "peer_lists.h"

#include <fmt/format.h>

#include <limits>

#include "adaqp/common/error.h"

namespace adaqp::exchange_detail {

std::vector<std::vector<int64_t>> exchange_lists(Communicator& comm,
                                                 const std::vector<std::vector<int64_t>>& out,
                                                 int tag, const std::string& what) {
  const int world = comm.size();
  std::vector<int64_t> send_n(world), recv_n(world, 0);
  ExchangeBuffers counts = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    if (r == comm.rank()) continue;
    send_n[r] = static_cast<int64_t>(out[r].size());
    counts.send[r] = &send_n[r];
    counts.send_bytes[r] = sizeof(int64_t);
    counts.recv[r] = &recv_n[r];
    counts.recv_bytes[r] = sizeof(int64_t);
  }
  comm.exchange(counts, {tag})->wait();
  std::vector<std::vector<int64_t>> in(world);
  ExchangeBuffers lists = ExchangeBuffers::none(world);
  for (int r = 0; r < world; ++r) {
    if (r == comm.rank()) continue;
    ADAQP_CHECK_GE(recv_n[r], 0, fmt::format("{}: entries announced by rank {}", what, r));
    in[r].resize(static_cast<size_t>(recv_n[r]));
    lists.send[r] = out[r].data();
    lists.send_bytes[r] = out[r].size() * sizeof(int64_t);
    lists.recv[r] = in[r].data();
    lists.recv_bytes[r] = in[r].size() * sizeof(int64_t);
  }
  comm.exchange(lists, {tag})->wait();
  return in;
}

int64_t ListReader::next(const char* item, int64_t lo, int64_t hi) {
  ADAQP_CHECK(pos_ < list_.size(),
              fmt::format("{}: the list from rank {} ends before its {}", what_, from_, item));
  const int64_t v = list_[pos_++];
  ADAQP_CHECK(v >= lo && v <= hi, fmt::format("{}: rank {} sent {} {} outside [{}, {}]", what_,
                                              from_, item, v, lo, hi));
  return v;
}

void ListReader::expect_end() const {
  ADAQP_CHECK(pos_ == list_.size(),
              fmt::format("{}: the list from rank {} has {} entries after its last row", what_,
                          from_, list_.size() - pos_));
}

int64_t read_partial_sum(ListReader& in, const Part& part, int64_t first, int64_t count,
                         std::vector<int32_t>* sources) {
  const int64_t degree = in.next("destination in-degree", 1, std::numeric_limits<int64_t>::max());
  const int64_t edges = in.next("partial sum edge count", 1, in.remaining());
  for (int64_t e = 0; e < edges; ++e) {
    const int64_t j = part.send_idx[first + in.next("partial sum source", 0, count - 1)];
    sources->push_back(static_cast<int32_t>(j));
  }
  return degree;
}

}  // namespace adaqp::exchange_detail
