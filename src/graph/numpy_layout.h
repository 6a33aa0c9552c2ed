// The NumPy layout's array shapes and the words of its errors, shared by the whole-graph loader
// (numpy_loader.cpp) and the slice reader (slice_loader.cpp), so that both accept the same files
// and report a problem alike. `a` may be a header only (NpyHeader::array: no payload).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/graph/graph.h"
#include "adaqp/graph/npy.h"

namespace adaqp {

// Its presence marks a typed (heterogeneous) dataset in the NumPy layout (dataset.h).
constexpr char kNodeTypesJson[] = "node_types.json";

// Large arrays are read in blocks of this many elements: a whole-file read would hold the file's
// bytes beside what they become (and, for edge_index, its widened copy and both rows: 4.5 times
// the CSR at the peak).
constexpr int64_t kNpyBlockElements = int64_t{1} << 22;

inline std::string index1(int64_t i) {
  return "index " + std::to_string(i);
}
inline std::string index2(int64_t i, int64_t j) {
  return "index [" + std::to_string(i) + ", " + std::to_string(j) + "]";
}

[[noreturn]] inline void bad_layout(const std::string& path, const NpyArray& a,
                                    const std::string& want) {
  throw InputError(
      path, "", "has dtype " + a.descr() + " and shape " + a.shape_string() + ", expected " + want);
}

// N, the rows of an array of one row per node, below kMaxNodes: checked before anything is sized
// by it (an array of no columns bounds N by no bytes).
inline void check_node_rows(const std::string& path, const NpyArray& a) {
  if (!a.shape.empty() && a.shape[0] >= kMaxNodes)
    throw InputError(path, "header",
                     "shape " + a.shape_string() + ": " + std::to_string(a.shape[0]) +
                         " nodes, at least 2^31 (node ids are 32-bit)");
}

// feat.npy: float32 [N, F].
inline void check_feature_layout(const std::string& path, const NpyArray& a) {
  if (a.dtype != NpyDtype::kFloat32 || a.shape.size() != 2) {
    bad_layout(path, a,
               a.dtype != NpyDtype::kFloat32
                   ? "float32 (<f4) [N, F] (convert with .astype(numpy.float32))"
                   : "float32 (<f4) [N, F] (one row per node: .reshape(N, F))");
  }
  check_node_rows(path, a);
}

// edge_index.npy: int32 or int64 [2, E].
inline void check_edge_layout(const std::string& path, const NpyArray& a) {
  if (!npy_is_int(a) || a.shape.size() != 2 || a.shape[0] != 2)
    bad_layout(path, a, "int32 or int64 [2, E] (row 0 sources, row 1 targets)");
}

// label.npy of n nodes (N from `nodes_file`): true for class ids (int [n] or [n, 1]), false for
// multi-label 0/1 values (float32/uint8/bool/int32/int64 [n, C], C > 1 for the integers: PyG's
// ogbn-proteins y is int64 [N, 112]); bad_layout otherwise.
inline bool labels_are_class_ids(const std::string& path, const NpyArray& a, int64_t n,
                                 const char* nodes_file) {
  const bool rows_match = !a.shape.empty() && a.shape[0] == n;
  if (npy_is_int(a) && rows_match &&
      (a.shape.size() == 1 || (a.shape.size() == 2 && a.shape[1] == 1)))
    return true;
  const bool multi_dtype = a.dtype == NpyDtype::kFloat32 || a.dtype == NpyDtype::kUInt8 ||
                           a.dtype == NpyDtype::kBool || npy_is_int(a);
  if (!multi_dtype || !rows_match || a.shape.size() != 2 || a.shape[1] < 1)
    bad_layout(path, a,
               "int32/int64 [" + std::to_string(n) + "] class ids or float32/uint8/bool/int [" +
                   std::to_string(n) + ", C] multi-label 0/1 values (N from " + nodes_file + ")");
  return false;
}

// Element i of multi-label values' payload bytes (labels_are_class_ids false: float32, uint8,
// bool, int32 or int64).
inline double multilabel_value(const uint8_t* bytes, NpyDtype d, int64_t i) {
  const auto element = [&](auto value) {
    std::memcpy(&value, bytes + i * static_cast<int64_t>(sizeof value), sizeof value);
    return static_cast<double>(value);
  };
  if (d == NpyDtype::kFloat32) return element(float{});
  if (d == NpyDtype::kInt32) return element(int32_t{});
  if (d == NpyDtype::kInt64) return element(int64_t{});
  return bytes[i];
}

// train/valid/test.npy of n nodes: true for a bool mask [n], false for int node ids [K];
// bad_layout otherwise.
inline bool split_is_mask(const std::string& path, const NpyArray& a, int64_t n) {
  if (a.dtype == NpyDtype::kBool && a.shape.size() == 1 && a.shape[0] == n) return true;
  if (npy_is_int(a) && a.shape.size() == 1) return false;
  bad_layout(path, a, "int32/int64 node ids [K] or a bool mask [" + std::to_string(n) + "]");
}

}  // namespace adaqp
