// CRC-32 (zlib's): the checksums of array files and part transfers, and the datasets' fingerprints.
#pragma once

#include <cstddef>
#include <cstdint>

namespace adaqp {

// The CRC of the empty input.
constexpr uint32_t kCrcEmpty = 0;

// `crc` (of the input so far) continued over `bytes` bytes at `data`, of any length (data may be
// null when bytes is 0).
uint32_t crc_bytes(uint32_t crc, const void* data, size_t bytes);

}  // namespace adaqp
