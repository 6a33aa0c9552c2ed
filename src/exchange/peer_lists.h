// Start-up index lists between the ends of a layout's pairs of parts (exchange/cover_layout.h,
// exchange/relation_first_layout.h): each receiver tells each sender which rows to form, and the
// sender reads the list one checked value at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/partition/part.h"

namespace adaqp::exchange_detail {

// Sends out[r] to every rank r and returns what each rank sent here (two exchanges on `tag`: the
// lengths, then the lists). Collective. `what` names the layout in errors.
std::vector<std::vector<int64_t>> exchange_lists(Communicator& comm,
                                                 const std::vector<std::vector<int64_t>>& out,
                                                 int tag, const std::string& what);

// Reads the list rank `from` sent, one value at a time, each checked against its bounds (an
// Error naming `what`, the peer and the value otherwise).
class ListReader {
 public:
  ListReader(const std::vector<int64_t>& list, int from, std::string what)
      : list_(list), from_(from), what_(std::move(what)) {}

  int64_t next(const char* item, int64_t lo, int64_t hi);
  int64_t remaining() const { return static_cast<int64_t>(list_.size() - pos_); }
  // Throws unless every value was read.
  void expect_end() const;

 private:
  const std::vector<int64_t>& list_;
  int from_;
  std::string what_;
  size_t pos_ = 0;
};

// Reads a partial sum as a receiver lists it: its destination's in-degree (a multigraph's counts
// duplicate edges), its number of edges and each edge's source position in the sender's send list
// to that receiver (part.send_idx[first .. first + count)), whose owned rows it appends to
// `sources`. Returns the in-degree.
int64_t read_partial_sum(ListReader& in, const Part& part, int64_t first, int64_t count,
                         std::vector<int32_t>* sources);

}  // namespace adaqp::exchange_detail
