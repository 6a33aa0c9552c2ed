#include "adaqp/common/crc.h"

#include <zlib.h>

namespace adaqp {

uint32_t crc_bytes(uint32_t crc, const void* data, size_t bytes) {
  // crc32_z takes a size_t length; with a null buffer it returns the empty input's CRC instead.
  if (bytes == 0) return crc;
  return static_cast<uint32_t>(crc32_z(crc, static_cast<const Bytef*>(data), bytes));
}

}  // namespace adaqp
