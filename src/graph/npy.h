// Reading and writing NumPy .npy files (format versions 1.0 and 2.0, C order, little-endian).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace adaqp {

enum class NpyDtype { kInt32, kInt64, kFloat32, kFloat64, kUInt8, kBool };

// '<i4', '<i8', '<f4', '<f8', '|u1', '|b1'.
const char* npy_descr(NpyDtype dtype);
size_t npy_item_size(NpyDtype dtype);

struct NpyArray {
  NpyDtype dtype = NpyDtype::kUInt8;
  std::vector<int64_t> shape;
  std::vector<uint8_t> payload;  // row-major elements, little-endian

  int64_t size() const { return static_cast<int64_t>(payload.size() / npy_item_size(dtype)); }
  std::string shape_string() const;  // "(2, 5)" as NumPy prints it
};

// Reads a whole .npy file. InputError naming the file on a missing file, a bad magic or header, an
// unsupported dtype, Fortran order, or a payload shorter or longer than the shape says.
NpyArray read_npy(const std::string& path);

// Writes `payload` (row-major, little-endian elements of `dtype`) with the given shape; InputError
// naming the file if it cannot be written completely.
void write_npy(const std::string& path, NpyDtype dtype, const std::vector<int64_t>& shape,
               const void* payload, size_t bytes);

}  // namespace adaqp
