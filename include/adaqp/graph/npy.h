// Reading and writing NumPy .npy files (format versions 1.0 and 2.0, C order, little-endian).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace adaqp {

enum class NpyDtype { kInt32, kInt64, kFloat16, kFloat32, kFloat64, kUInt8, kBool, kBytes };

// '<i4', '<i8', '<f2', '<f4', '<f8', '|u1', '|b1' and their sizes; kBytes ('|S<n>', NumPy's
// fixed-width byte strings, as in the 'format' member of a SciPy .npz) has no fixed size:
// InvariantError.
const char* npy_descr(NpyDtype dtype);
size_t npy_item_size(NpyDtype dtype);

struct NpyArray {
  NpyDtype dtype = NpyDtype::kUInt8;
  size_t item_size = 1;  // bytes per element (n for '|S<n>')
  std::vector<int64_t> shape;
  std::vector<uint8_t> payload;  // row-major elements, little-endian

  int64_t size() const { return static_cast<int64_t>(payload.size() / item_size); }
  std::string descr() const;         // as in the header: "<f4", "|S3"
  std::string shape_string() const;  // "(2, 5)" as NumPy prints it
};

// Reads a whole .npy file. InputError naming the file on a missing file, a bad magic or header, an
// unsupported dtype, Fortran order, or a payload shorter or longer than the shape says.
NpyArray read_npy(const std::string& path);

// The same for the bytes of a .npy file already in memory (a member of a .npz archive); errors
// name `origin`. The header is dropped in place: the payload reuses `bytes`' storage.
NpyArray parse_npy(const std::string& origin, std::vector<uint8_t> bytes);

// A .npy file's header: the array's dtype and shape (no payload), where the payload starts and
// how many elements it holds; checked as read_npy checks it (the file's size included).
struct NpyHeader {
  NpyArray array;
  uint64_t payload_offset = 0;
  int64_t elements = 0;
};
NpyHeader read_npy_header(const std::string& path);
// The header of a .npy whose first `prefix` bytes (the whole header at least) are at `bytes` and
// whose size is `total` (a .npz member read as a stream); errors name `origin`.
NpyHeader parse_npy_header(const std::string& origin, const uint8_t* bytes, uint64_t prefix,
                           uint64_t total);
// Elements [first, first + count) of the flattened payload, read without the rest.
std::vector<uint8_t> read_npy_range(const std::string& path, const NpyHeader& header, int64_t first,
                                    int64_t count);

// The bytes of a .npy file (format 1.0) before its payload: magic, version and the header of an
// array of `dtype` (not kBytes) and `shape`, padded to a multiple of 64 bytes.
std::string npy_header(NpyDtype dtype, const std::vector<int64_t>& shape);

// Writes `payload` (row-major, little-endian elements of `dtype`) with the given shape; InputError
// naming the file if it cannot be written completely. Not for kBytes.
void write_npy(const std::string& path, NpyDtype dtype, const std::vector<int64_t>& shape,
               const void* payload, size_t bytes);

// Element i of `a`, as the C++ type of its dtype (the caller checked the dtype).
template <typename T>
T npy_element(const NpyArray& a, int64_t i) {
  T value;
  std::memcpy(&value, a.payload.data() + i * sizeof(T), sizeof(T));
  return value;
}

// int32 or int64.
bool npy_is_int(const NpyArray& a);
// The elements of an int32 or int64 array, widened.
std::vector<int64_t> npy_to_int64(const NpyArray& a);
// The same for raw payload bytes of dtype `d` (int32 or int64), e.g. a range read or a piece of a
// streamed member.
std::vector<int64_t> npy_to_int64(const std::vector<uint8_t>& bytes, NpyDtype d);

// The end of the message for an id read from an array that is not in [0, n).
inline std::string out_of_range(int64_t n) {
  return " is out of range [0, " + std::to_string(n) + ")";
}

}  // namespace adaqp
