// Whole array files (common/array_file.h) in memory, for tests that edit one array and write the
// file again with correct checksums, so that a reader's own check, not the checksum, must react.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "adaqp/common/array_file.h"

namespace adaqp::test {

using Array = std::variant<std::vector<int32_t>, std::vector<int64_t>, std::vector<uint8_t>,
                           std::vector<float>, std::vector<double>>;
using Arrays = std::map<std::string, Array>;

inline Arrays read_all(const std::string& file) {
  const ArrayFileReader in(file);
  Arrays out;
  for (const auto& [name, dtype] : in.arrays()) {
    switch (dtype) {
      case DType::I32:
        out[name] = in.get<int32_t>(name);
        break;
      case DType::I64:
        out[name] = in.get<int64_t>(name);
        break;
      case DType::U8:
        out[name] = in.get<uint8_t>(name);
        break;
      case DType::F32:
        out[name] = in.get<float>(name);
        break;
      case DType::F64:
        out[name] = in.get<double>(name);
        break;
    }
  }
  return out;
}

inline void write_all(const std::string& file, const Arrays& arrays) {
  ArrayFileWriter out;
  for (const auto& [name, values] : arrays)
    std::visit([&out, &name = name](const auto& v) { out.add(name, v); }, values);
  out.write(file);
}

}  // namespace adaqp::test
