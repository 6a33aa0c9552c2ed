#include "adaqp/assign/bit_widths.h"

#include <string>

#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "adaqp/quant/widths.h"

namespace adaqp {

namespace {

std::vector<uint8_t> widths(const std::vector<int64_t>& keys, const SchemeOptions& opt,
                            uint32_t epoch, int layer, Direction dir) {
  std::vector<uint8_t> bits(keys.size(), static_cast<uint8_t>(opt.bits));
  if (opt.scheme == BitScheme::kRandom) {
    for (size_t k = 0; k < keys.size(); ++k) {
      bits[k] = static_cast<uint8_t>(
          random_bit_width(opt.seed, epoch, static_cast<uint32_t>(layer), dir, keys[k]));
    }
  }
  return bits;
}

}  // namespace

const char* direction_name(Direction dir) {
  return dir == Direction::kForward ? "fwd" : "bwd";
}

const std::vector<int64_t>& send_keys(const Boundary& boundary, Direction dir) {
  return dir == Direction::kForward ? boundary.send_keys : boundary.recv_keys;
}

const std::vector<int64_t>& recv_keys(const Boundary& boundary, Direction dir) {
  return dir == Direction::kForward ? boundary.recv_keys : boundary.send_keys;
}

const std::vector<int64_t>& send_offsets(const Boundary& boundary, Direction dir) {
  return dir == Direction::kForward ? boundary.send_offsets : boundary.recv_offsets;
}

const std::vector<int64_t>& recv_offsets(const Boundary& boundary, Direction dir) {
  return dir == Direction::kForward ? boundary.recv_offsets : boundary.send_offsets;
}

int random_bit_width(uint64_t seed, uint32_t epoch, uint32_t layer, Direction dir, int64_t key) {
  const PhiloxWords w = philox_block(seed, epoch, layer, RngStream::kRandomBits,
                                     static_cast<uint64_t>(key), static_cast<uint32_t>(dir));
  // Multiply-shift maps the word onto {0, 1, 2} (bias below 2^-31).
  return quant::bit_width(
      static_cast<int>((static_cast<uint64_t>(w.v[0]) * quant::kNumWidths) >> 32));
}

const MessageTrace* MessageTraces::find(int layer, Direction dir) const {
  const std::vector<MessageTrace>& traces = by_dir[static_cast<int>(dir)];
  if (layer < 0 || static_cast<size_t>(layer) >= traces.size() || traces[layer].width == 0) {
    return nullptr;
  }
  return &traces[layer];
}

QuantPlan scheme_plan(const Boundary& boundary, int layers, const SchemeOptions& opt,
                      uint32_t epoch) {
  ADAQP_CHECK(opt.scheme != BitScheme::kAdaptive,
              "the adaptive scheme's plan comes from its solver (assign/policy.h)");
  if (opt.scheme == BitScheme::kUniform && !quant::valid_bits(opt.bits)) {
    throw ConfigError("communication.bits: " + quant::not_a_width(opt.bits));
  }
  QuantPlan plan;
  plan.seed = opt.seed;
  plan.epoch = epoch;
  const Direction dirs[2] = {Direction::kForward, Direction::kBackward};
  for (Direction dir : dirs) {
    const std::vector<int64_t>& send = send_keys(boundary, dir);
    const std::vector<int64_t>& recv = recv_keys(boundary, dir);
    std::vector<MessageBits>& out = dir == Direction::kForward ? plan.forward : plan.backward;
    for (int l = 0; l < layers; ++l) {
      out.push_back(
          MessageBits{widths(send, opt, epoch, l, dir), widths(recv, opt, epoch, l, dir)});
    }
  }
  return plan;
}

}  // namespace adaqp
