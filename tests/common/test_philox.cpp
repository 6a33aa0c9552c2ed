#include "adaqp/common/philox.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "adaqp/common/philox_rows.h"

namespace adaqp {
namespace {

void expect_words(const PhiloxWords& got, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3) {
  EXPECT_EQ(got.v[0], w0);
  EXPECT_EQ(got.v[1], w1);
  EXPECT_EQ(got.v[2], w2);
  EXPECT_EQ(got.v[3], w3);
}

// The known-answer vectors of Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST(Philox, KnownAnswerVectors) {
  expect_words(philox4x32_10(PhiloxWords{{0, 0, 0, 0}}, 0, 0), 0x6627e8d5u, 0xe169c58du,
               0xbc57ac4cu, 0x9b00dbd8u);
  expect_words(philox4x32_10(PhiloxWords{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
                             0xffffffffu, 0xffffffffu),
               0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu);
  expect_words(philox4x32_10(PhiloxWords{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
                             0xa4093822u, 0x299f31d0u),
               0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u);
}

// philox_block is Philox of the documented counter under the seed's two halves.
TEST(Philox, BlockIsPhiloxOfTheCounter) {
  const uint64_t seed = 0x0123456789abcdefull;
  const PhiloxWords ctr = philox_counter(7, 3, RngStream::kQuantBackward, 0x12345678abull, 9);
  expect_words(ctr, 9u, 0x345678abu, 0x12u | (3u << 8) | (1u << 16), 7u);
  const PhiloxWords want = philox4x32_10(ctr, 0x89abcdefu, 0x01234567u);
  expect_words(philox_block(seed, 7, 3, RngStream::kQuantBackward, 0x12345678abull, 9), want.v[0],
               want.v[1], want.v[2], want.v[3]);
}

// Changing any one counter field (epoch, layer, stream, node, block) or the seed changes the words.
TEST(Philox, EveryKeyFieldSelectsADifferentStream) {
  std::set<uint32_t> first_words;
  first_words.insert(philox_block(1, 2, 3, RngStream::kQuantForward, 4, 5).v[0]);
  first_words.insert(philox_block(2, 2, 3, RngStream::kQuantForward, 4, 5).v[0]);
  first_words.insert(philox_block(1, 9, 3, RngStream::kQuantForward, 4, 5).v[0]);
  first_words.insert(philox_block(1, 2, 4, RngStream::kQuantForward, 4, 5).v[0]);
  first_words.insert(philox_block(1, 2, 3, RngStream::kQuantBackward, 4, 5).v[0]);
  first_words.insert(philox_block(1, 2, 3, RngStream::kQuantForward, 4ull << 32, 5).v[0]);
  first_words.insert(philox_block(1, 2, 3, RngStream::kQuantForward, 4, 6).v[0]);
  EXPECT_EQ(first_words.size(), 7u);
}

TEST(Philox, UniformCoversZeroToOneExclusive) {
  EXPECT_EQ(philox_uniform(0u), 0.0f);
  EXPECT_EQ(philox_uniform(0xFFu), 0.0f);  // only the top 24 bits count
  EXPECT_EQ(philox_uniform(0x80000000u), 0.5f);
  EXPECT_EQ(philox_uniform(0xFFFFFFFFu), 1.0f - 1.0f / 16777216.0f);
}

// The row generator (the widest path in use; ctest's unit_isa_* run it again on the narrower ones)
// gives philox_block's words for every block, across batch boundaries and in a last batch of every
// vector count, for nodes with high id bits, and writes nothing past the buffer (the words after
// it keep their sentinel).
TEST(Philox, RowWordsAreTheBlocksWords) {
  const uint64_t seed = 0xfedcba9876543210ull;
  for (const uint64_t gid : {uint64_t{0}, uint64_t{12345}, (uint64_t{1} << 40) - 1}) {
    for (const int64_t blocks : {1, 8, 9, 16, 17, 24, 31, 32, 33, 48, 64, 100}) {
      const int64_t size = philox_row_words_size(blocks);
      ASSERT_EQ(size % (4 * kPhiloxBatch), 0);
      ASSERT_GE(size, 4 * blocks);
      std::vector<uint32_t> words(static_cast<size_t>(size + 4), 0xA5A5A5A5u);
      philox_row_words(seed, 11, 2, RngStream::kQuantBackward, gid, blocks, words.data());
      for (int64_t b = 0; b < blocks; ++b) {
        const PhiloxWords want =
            philox_block(seed, 11, 2, RngStream::kQuantBackward, gid, static_cast<uint32_t>(b));
        for (int k = 0; k < 4; ++k)
          ASSERT_EQ(words[static_cast<size_t>(4 * b + k)], want.v[k])
              << "gid " << gid << " block " << b << " word " << k;
      }
      for (int64_t i = size; i < size + 4; ++i)
        EXPECT_EQ(words[static_cast<size_t>(i)], 0xA5A5A5A5u);
    }
  }
}

// Scattered blocks (any node, high id bits included, any block, repeats) give philox_block's
// picked word in every lane, for every count up to a batch; nothing past the count is written.
TEST(Philox, PickedWordsAreTheBlocksWords) {
  const uint64_t seed = 0x0123456789abcdefull;
  std::mt19937_64 rng(5);
  for (const int64_t n : {1, 7, 8, 9, 31, 32}) {
    std::vector<uint64_t> gids(static_cast<size_t>(n));
    std::vector<uint32_t> blocks(gids.size()), pick(gids.size());
    for (int64_t j = 0; j < n; ++j) {
      gids[j] = j % 5 == 4 ? gids[j - 1] : rng() % (uint64_t{1} << 40);
      blocks[j] = j % 5 == 4 ? blocks[j - 1] : static_cast<uint32_t>(rng() % 1000);
      pick[j] = static_cast<uint32_t>(rng() % 4);
    }
    std::vector<uint32_t> out(static_cast<size_t>(n + 1), 0xA5A5A5A5u);
    philox_picked_words(seed, 9, 1, RngStream::kDropout, gids.data(), blocks.data(), pick.data(), n,
                        out.data());
    for (int64_t j = 0; j < n; ++j) {
      const PhiloxWords want = philox_block(seed, 9, 1, RngStream::kDropout, gids[j], blocks[j]);
      ASSERT_EQ(out[j], want.v[pick[j]]) << "n " << n << " lane " << j;
    }
    EXPECT_EQ(out[n], 0xA5A5A5A5u) << "n " << n;
  }
}

}  // namespace
}  // namespace adaqp
