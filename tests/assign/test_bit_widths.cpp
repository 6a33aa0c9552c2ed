// The width schemes every rank computes alike (uniform, random), the message order of a boundary
// by direction, and the trace lookup (assign/bit_widths.h), on a hand-built boundary: rank 0 of 2,
// sending 2 rows to rank 1 and receiving 3.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "adaqp/assign/bit_widths.h"
#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"
#include "adaqp/quant/widths.h"

namespace adaqp {
namespace {

Boundary two_part_boundary() {
  Boundary b;
  b.rank = 0;
  b.num_parts = 2;
  b.send_offsets = {0, 0, 2};
  b.recv_offsets = {0, 0, 3};
  b.send_keys = {10, 11};
  b.recv_keys = {20, 21, 22};
  return b;
}

// A backward exchange sends the gradients of the rows a forward one receives, and receives those
// of the rows it sends.
TEST(BitWidths, DirectionsSwapSendAndReceive) {
  const Boundary b = two_part_boundary();
  EXPECT_EQ(send_keys(b, Direction::kForward), b.send_keys);
  EXPECT_EQ(recv_keys(b, Direction::kForward), b.recv_keys);
  EXPECT_EQ(send_keys(b, Direction::kBackward), b.recv_keys);
  EXPECT_EQ(recv_keys(b, Direction::kBackward), b.send_keys);
  EXPECT_EQ(send_offsets(b, Direction::kForward), b.send_offsets);
  EXPECT_EQ(recv_offsets(b, Direction::kForward), b.recv_offsets);
  EXPECT_EQ(send_offsets(b, Direction::kBackward), b.recv_offsets);
  EXPECT_EQ(recv_offsets(b, Direction::kBackward), b.send_offsets);
  EXPECT_STREQ(direction_name(Direction::kForward), "fwd");
  EXPECT_STREQ(direction_name(Direction::kBackward), "bwd");
}

TEST(BitWidths, UniformPlanCoversEveryLayerAndDirection) {
  const Boundary b = two_part_boundary();
  SchemeOptions so;
  so.scheme = BitScheme::kUniform;
  so.bits = 4;
  so.seed = 17;
  const QuantPlan plan = scheme_plan(b, 3, so, 7);
  EXPECT_EQ(plan.seed, 17u);
  EXPECT_EQ(plan.epoch, 7u);
  ASSERT_EQ(plan.forward.size(), 3u);
  ASSERT_EQ(plan.backward.size(), 3u);
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(plan.forward[l].send, std::vector<uint8_t>(2, 4)) << l;
    EXPECT_EQ(plan.forward[l].recv, std::vector<uint8_t>(3, 4)) << l;
    EXPECT_EQ(plan.backward[l].send, std::vector<uint8_t>(3, 4)) << l;
    EXPECT_EQ(plan.backward[l].recv, std::vector<uint8_t>(2, 4)) << l;
    EXPECT_FALSE(plan.forward[l].full_precision);
    EXPECT_FALSE(plan.backward[l].full_precision);
  }
  // Full precision is no uniform width (it is a whole exchange's choice, not a scheme's).
  for (int bad : {3, 16, quant::kFullPrecisionBits}) {
    so.bits = bad;
    EXPECT_THROW(scheme_plan(b, 2, so, 1), ConfigError) << bad;
  }
  so.scheme = BitScheme::kAdaptive;
  so.bits = 4;
  EXPECT_THROW(scheme_plan(b, 2, so, 1), InvariantError);
}

// Both ends compute the random widths: each message's is the draw of its own key, direction,
// layer and epoch.
TEST(BitWidths, RandomPlanIsEachKeysOwnDraw) {
  const Boundary b = two_part_boundary();
  SchemeOptions so;
  so.scheme = BitScheme::kRandom;
  so.seed = 99;
  const QuantPlan plan = scheme_plan(b, 2, so, 5);
  for (Direction dir : {Direction::kForward, Direction::kBackward}) {
    const std::vector<MessageBits>& bits =
        dir == Direction::kForward ? plan.forward : plan.backward;
    ASSERT_EQ(bits.size(), 2u);
    for (int l = 0; l < 2; ++l) {
      const std::vector<int64_t>& send = send_keys(b, dir);
      const std::vector<int64_t>& recv = recv_keys(b, dir);
      ASSERT_EQ(bits[l].send.size(), send.size());
      ASSERT_EQ(bits[l].recv.size(), recv.size());
      for (size_t k = 0; k < send.size(); ++k) {
        EXPECT_EQ(bits[l].send[k], random_bit_width(99, 5, l, dir, send[k]));
      }
      for (size_t k = 0; k < recv.size(); ++k) {
        EXPECT_EQ(bits[l].recv[k], random_bit_width(99, 5, l, dir, recv[k]));
      }
    }
  }
}

// Uniform over {2, 4, 8} from word 0 of the key's Philox block (multiply-shift onto 0..2), and a
// fresh draw for another direction, layer or epoch.
TEST(BitWidths, RandomWidthIsTheKeysPhiloxWord) {
  std::array<int, 9> count{};
  int other_dir = 0, other_layer = 0, other_epoch = 0;
  const int n = 30000;
  for (int64_t key = 0; key < n; ++key) {
    const int b = random_bit_width(1, 3, 0, Direction::kForward, key);
    ASSERT_TRUE(quant::valid_bits(b)) << b;
    ++count[b];
    const PhiloxWords w =
        philox_block(1, 3, 0, RngStream::kRandomBits, static_cast<uint64_t>(key), 0);
    EXPECT_EQ(b, quant::bit_width(static_cast<int>((static_cast<uint64_t>(w.v[0]) * 3) >> 32)));
    other_dir += b != random_bit_width(1, 3, 0, Direction::kBackward, key);
    other_layer += b != random_bit_width(1, 3, 1, Direction::kForward, key);
    other_epoch += b != random_bit_width(1, 4, 0, Direction::kForward, key);
  }
  for (int b : {2, 4, 8}) {
    EXPECT_NEAR(count[b], n / 3.0, n * 0.02) << b;
  }
  // Independent draws differ 2/3 of the time.
  for (int differ : {other_dir, other_layer, other_epoch})
    EXPECT_NEAR(differ, 2 * n / 3.0, n * 0.02);
}

TEST(BitWidths, TracesFindOnlyTracedExchanges) {
  MessageTraces traces;
  traces.by_dir[0].resize(2);  // forward layer 0 never traced (width 0), layer 1 traced
  traces.by_dir[0][1].width = 16;
  traces.by_dir[0][1].ranges = {1.5f};
  EXPECT_EQ(traces.find(0, Direction::kForward), nullptr);
  EXPECT_EQ(traces.find(1, Direction::kForward), &traces.by_dir[0][1]);
  EXPECT_EQ(traces.find(2, Direction::kForward), nullptr);
  EXPECT_EQ(traces.find(-1, Direction::kForward), nullptr);
  EXPECT_EQ(traces.find(1, Direction::kBackward), nullptr);
}

}  // namespace
}  // namespace adaqp
