// A small binary container of named, typed arrays with a CRC-32 per array. Used for partition parts
// and checkpoints. Layout: magic "ADQPARR1", u32 count, then per array (in name order): u32 name
// length, name, u8 dtype, u64 element count, u32 crc32 (zlib) of the payload, payload
// (little-endian). Element types: int32_t, int64_t, uint8_t, float, double. The same arrays always
// give the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace adaqp {

enum class DType : uint8_t { I32 = 1, I64 = 2, U8 = 3, F32 = 4, F64 = 5 };

// Bytes of one element of type `t` (0 for a value outside the enum).
size_t dtype_size(DType t);

class ArrayFileWriter {
 public:
  // Adds a copy of `values`.
  template <typename T>
  void add(const std::string& name, const std::vector<T>& values);
  // Adds `values`, kept without a copy.
  template <typename T>
  void add(const std::string& name, std::vector<T>&& values);
  // Adds `values` without a copy or ownership: they must stay alive and unchanged until the last
  // write() (a part's arrays, written from the part as it is: no second copy of its features).
  template <typename T>
  void add_view(const std::string& name, const std::vector<T>& values);
  template <typename T>
  void add_view(const std::string& name, const std::vector<T>&& values) = delete;  // would dangle
  // Writes to `path` via a temporary file, fsync and rename: a crash never leaves a half file.
  void write(const std::string& path) const;

 private:
  struct Entry {
    DType dtype;
    uint64_t count;
    const void* data;             // count elements
    std::shared_ptr<void> owner;  // what holds them, unless a view
  };
  std::map<std::string, Entry> entries_;
};

class ArrayFileReader {
 public:
  // Reads and checks the whole file: InputError naming the file and the array on a bad magic,
  // truncation, trailing bytes, checksum mismatch or a name that is not printable ASCII.
  explicit ArrayFileReader(const std::string& path);
  // Not copied: copies would share the arrays that take() hands over.
  ArrayFileReader(const ArrayFileReader&) = delete;
  ArrayFileReader& operator=(const ArrayFileReader&) = delete;
  bool has(const std::string& name) const { return entries_.count(name) != 0; }
  // Every array's name and element type, in name order.
  std::vector<std::pair<std::string, DType>> arrays() const;
  // The number of elements of array `name` (InputError if missing).
  uint64_t count(const std::string& name) const;
  // InputError if missing or of another dtype.
  template <typename T>
  std::vector<T> get(const std::string& name) const;
  // As get, but hands over the array read (no copy); it is then missing from this reader.
  template <typename T>
  std::vector<T> take(const std::string& name);
  // A uint8 array holding text: InputError, naming the first byte that is not printable ASCII by
  // its position (a damaged or foreign file's bytes never reach a terminal), as get otherwise.
  std::string text(const std::string& name) const;

 private:
  struct Entry {
    DType dtype;
    uint64_t count;
    std::shared_ptr<void> values;  // a std::vector of the dtype's type
  };
  template <typename T>
  std::vector<T>& values_of(const std::string& name) const;
  template <typename T>
  static void* vector_of(Entry& e);
  std::string path_;
  std::map<std::string, Entry> entries_;
};

}  // namespace adaqp
