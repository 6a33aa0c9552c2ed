// Structural checks of a part file's arrays (partition_dir.cpp, part_features.cpp): each failure
// is one InputError naming the file and the array.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp {

class PartChecker {
 public:
  explicit PartChecker(std::string file) : file_(std::move(file)) {}
  void require(bool ok, const std::string& array, const std::string& what) const {
    if (!ok) fail(array, what);
  }
  // The loops below format their message only for the entry that fails: formatting one for
  // every entry took most of a part's checks (an eighth of reading a large part).
  [[noreturn]] void fail(const std::string& array, const std::string& what) const {
    throw InputError(file_, "array '" + array + "'", what);
  }
  void size(const std::string& array, size_t actual, int64_t expected) const {
    require(static_cast<int64_t>(actual) == expected, array,
            fmt::format("has {} entries, expected {}", actual, expected));
  }
  // A CSR/offset array: `rows` + 1 entries, starting at 0, non-decreasing, ending at `total`.
  void offsets(const std::string& array, const std::vector<int64_t>& o, int64_t rows,
               int64_t total) const {
    size(array, o.size(), rows + 1);
    require(o.front() == 0 && o.back() == total, array,
            fmt::format("must run from 0 to {}", total));
    for (size_t i = 1; i < o.size(); ++i)
      if (o[i - 1] > o[i]) fail(array, fmt::format("decreases at entry {}", i));
  }
  // Strictly ascending: a node listed once.
  void ascending(const std::string& array, const std::vector<int64_t>& v) const {
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i - 1] >= v[i])
        fail(array, fmt::format("entry {} = {} does not ascend (after {})", i, v[i], v[i - 1]));
  }
  // Every global id once over the owned and the halo nodes (a node is either kind, once); ids are
  // in [0, num_nodes). A bitmap of num_nodes bits: 14 MB at ogbn-papers100M's 111M nodes.
  void distinct_nodes(const std::vector<int64_t>& owned, const std::vector<int64_t>& halo,
                      int64_t num_nodes) const {
    std::vector<uint64_t> seen(static_cast<size_t>((num_nodes + 63) / 64), 0);
    for (const auto& [array, ids] : {std::pair{"owned_gid", &owned}, {"halo_gid", &halo}}) {
      for (size_t i = 0; i < ids->size(); ++i) {
        const auto v = static_cast<uint64_t>((*ids)[i]);
        const uint64_t bit = uint64_t{1} << (v % 64);
        if ((seen[v / 64] & bit) != 0)
          fail(array, fmt::format("entry {} = node {} is listed twice (owned_gid and halo_gid "
                                  "name each node once)",
                                  i, v));
        seen[v / 64] |= bit;
      }
    }
  }
  // Each peer's rows in `idx` (segments of `offsets`) once, and none for the part's own rank.
  void sent_once(const std::string& array, const std::vector<int64_t>& offsets,
                 const std::vector<int64_t>& idx, int64_t rows, int rank) const {
    if (offsets[rank + 1] != offsets[rank])
      fail(array, fmt::format("sends rows to its own rank {}", rank));
    std::vector<int32_t> peer_of(static_cast<size_t>(rows), -1);
    for (size_t peer = 0; peer + 1 < offsets.size(); ++peer) {
      for (int64_t i = offsets[peer]; i < offsets[peer + 1]; ++i) {
        int32_t& last = peer_of[static_cast<size_t>(idx[i])];
        if (last == static_cast<int32_t>(peer))
          fail(array, fmt::format("entry {} = {} is sent to rank {} twice", i, idx[i], peer));
        last = static_cast<int32_t>(peer);
      }
    }
  }
  void non_negative(const std::string& array, const std::vector<int64_t>& v) const {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] < 0) fail(array, fmt::format("entry {} = {} is negative", i, v[i]));
  }
  template <typename T>
  void in_range(const std::string& array, const std::vector<T>& v, int64_t hi) const {
    for (size_t i = 0; i < v.size(); ++i)
      if (!(v[i] >= 0 && static_cast<int64_t>(v[i]) < hi))
        fail(array,
             fmt::format("entry {} = {} is outside [0, {})", i, static_cast<int64_t>(v[i]), hi));
  }

 private:
  std::string file_;
};

}  // namespace adaqp
