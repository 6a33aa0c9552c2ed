// The checks of a split's node ids that every loader shares, with one wording: an id in [0, N),
// and each node in one split at most, once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/common/error.h"

namespace adaqp {

// "node id V is out of range [0, N)".
inline std::string node_out_of_range(int64_t v, int64_t n) {
  return "node id " + std::to_string(v) + " is out of range [0, " + std::to_string(n) + ")";
}

// Records in `owner` (node v's byte, 0 while in no split) that v is in split `tag` (1-based, named
// names[tag - 1]); InputError at (path, where) if v is in that split already or in another.
// `splits` names what must be disjoint ("splits", "roles").
inline void claim_split_node(char& owner, char tag, int64_t v,
                             const std::vector<std::string>& names, const std::string& path,
                             const std::string& where, const char* splits = "splits") {
  if (owner == tag)
    throw InputError(path, where, "node id " + std::to_string(v) + " is listed twice");
  if (owner != 0) {
    throw InputError(path, where,
                     "node id " + std::to_string(v) + " is also in " +
                         names[static_cast<size_t>(owner - 1)] + " (" + splits +
                         " must be disjoint)");
  }
  owner = tag;
}

}  // namespace adaqp
