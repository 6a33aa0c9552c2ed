// The checks every loader applies to labels (a single-label node's class id, a multi-label entry),
// so that all formats word a bad label the same way.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace adaqp {

// What is wrong with class id `label` of a single-label dataset of `num_nodes` nodes, or "" when
// it is acceptable. No format declares a class count: it is the largest id + 1, so ids must be
// non-negative, and an id not below the node count (more classes than nodes) means a broken file.
inline std::string class_id_problem(int64_t label, int64_t num_nodes) {
  if (label < 0) return "label " + std::to_string(label) + " is negative (class ids start at 0)";
  if (label >= num_nodes)
    return "label " + std::to_string(label) + " is not below the node count " +
           std::to_string(num_nodes) + " (the class count, largest id + 1, cannot exceed it)";
  return "";
}

// What is wrong with a multi-label entry `value`, or "" when it is 0 or 1.
inline std::string multilabel_problem(double value) {
  if (value == 0.0 || value == 1.0) return "";
  return fmt::format("multi-label value {} is not 0 or 1", value);
}

}  // namespace adaqp
