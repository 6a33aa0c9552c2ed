// What the communicator tests (MPI and NCCL) send: a byte pattern that tells sender, receiver,
// exchange and position apart, and the canary bytes after every receive buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace adaqp::test {

constexpr double kTestTimeoutS = 60.0;
constexpr uint8_t kCanary = 0xA5;
constexpr size_t kCanaryBytes = 16;

// Byte i of what `sender` sends to `receiver` in the exchange labelled `salt`.
inline uint8_t pattern(int sender, int receiver, size_t i, int salt) {
  return static_cast<uint8_t>(sender * 131 + receiver * 31 + salt * 17 + i * 7 + i / 251);
}

}  // namespace adaqp::test
