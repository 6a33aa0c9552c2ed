#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/array_file.h"
#include "adaqp/common/error.h"
#include "test_util.h"

namespace adaqp {
namespace {

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string write_sample(const test::TempDir& dir) {
  ArrayFileWriter w;
  w.add("ints", std::vector<int32_t>{1, -2, 3});
  w.add("longs", std::vector<int64_t>{int64_t{1} << 40, -7});
  w.add("bytes", std::vector<uint8_t>{0, 255});
  w.add("floats", std::vector<float>{1.5f, -0.25f});
  w.add("doubles", std::vector<double>{3.25});
  w.add("empty", std::vector<int64_t>{});
  const std::string path = dir.str("a.bin");
  w.write(path);
  return path;
}

TEST(ArrayFile, RoundTripsEveryDtype) {
  test::TempDir dir;
  const ArrayFileReader r(write_sample(dir));
  EXPECT_EQ(r.get<int32_t>("ints"), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(r.get<int64_t>("longs"), (std::vector<int64_t>{int64_t{1} << 40, -7}));
  EXPECT_EQ(r.get<uint8_t>("bytes"), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(r.get<float>("floats"), (std::vector<float>{1.5f, -0.25f}));
  EXPECT_EQ(r.get<double>("doubles"), (std::vector<double>{3.25}));
  EXPECT_TRUE(r.get<int64_t>("empty").empty());
  EXPECT_TRUE(r.has("ints"));
  EXPECT_FALSE(r.has("nope"));
}

// A copy, a moved vector and a view give the same file; the copy and the moved vector no longer
// depend on the caller's vector, the view reads it when written.
TEST(ArrayFile, CopiesMovesAndViewsWriteTheSameBytes) {
  test::TempDir dir;
  const std::vector<float> values{1.5f, -0.0f, 3.0f};
  std::vector<float> copied = values, moved = values, viewed = values;
  ArrayFileWriter w;
  w.add("a", copied);
  w.add("b", std::move(moved));
  w.add_view("c", viewed);
  copied.assign(3, 9.0f);
  moved.assign(3, 9.0f);
  viewed[0] = 2.5f;
  w.write(dir.str("x.bin"));
  const ArrayFileReader r(dir.str("x.bin"));
  EXPECT_EQ(r.get<float>("a"), values);
  EXPECT_EQ(r.get<float>("b"), values);
  const std::vector<float> changed{2.5f, -0.0f, 3.0f};
  EXPECT_EQ(r.get<float>("c"), changed);
  ArrayFileWriter copies;
  copies.add("a", values);
  copies.add("b", values);
  copies.add("c", changed);
  copies.write(dir.str("y.bin"));
  EXPECT_EQ(read_bytes(dir.str("x.bin")), read_bytes(dir.str("y.bin")));
}

TEST(ArrayFile, TakeHandsOverAnArrayOnce) {
  test::TempDir dir;
  ArrayFileReader r(write_sample(dir));
  EXPECT_EQ(r.get<float>("floats"), (std::vector<float>{1.5f, -0.25f}));
  EXPECT_EQ(r.take<float>("floats"), (std::vector<float>{1.5f, -0.25f}));
  EXPECT_FALSE(r.has("floats"));
  EXPECT_NE(test::error_of<InputError>([&] { r.take<float>("floats"); }).find("missing"),
            std::string::npos);
  EXPECT_NE(test::error_of<InputError>([&] { r.take<int64_t>("ints"); }).find("dtype"),
            std::string::npos);
  EXPECT_EQ(r.take<int32_t>("ints"), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_TRUE(r.take<int64_t>("empty").empty());
}

TEST(ArrayFile, LeavesNoTemporaryFile) {
  test::TempDir dir;
  write_sample(dir);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename(), "a.bin");
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(ArrayFile, MissingArrayAndWrongDtypeNameTheArray) {
  test::TempDir dir;
  const ArrayFileReader r(write_sample(dir));
  EXPECT_NE(
      test::error_of<InputError>([&] { r.get<int32_t>("nope"); }).find("array 'nope': missing"),
      std::string::npos);
  EXPECT_NE(test::error_of<InputError>([&] {
              r.get<int64_t>("ints");
            }).find("array 'ints': has dtype int32, expected int64"),
            std::string::npos);
}

// Names and text arrays that are not printable ASCII: named by position, their bytes never printed.
TEST(ArrayFile, BytesThatAreNotTextAreNamedByPosition) {
  test::TempDir dir;
  const std::string path = dir.str("t.bin");
  ArrayFileWriter w;
  w.add("text", std::vector<uint8_t>{'o', 'k'});
  w.add("escaped", std::vector<uint8_t>{'g', 0x1b, 'n'});
  w.write(path);
  const ArrayFileReader r(path);
  EXPECT_EQ(r.text("text"), "ok");
  const std::string msg = test::error_of<InputError>([&] { r.text("escaped"); });
  EXPECT_NE(msg.find("array 'escaped': byte 1 of 3 is 0x1b, not text"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\x1b'), std::string::npos);
  ArrayFileWriter named;
  named.add(std::string("a\x1b"
                        "b"),
            std::vector<int32_t>{1});
  named.write(path);
  const std::string name_msg = test::error_of<InputError>([&] { ArrayFileReader bad(path); });
  EXPECT_NE(name_msg.find("array #0: name byte 1 of 3 is 0x1b, not text"), std::string::npos)
      << name_msg;
  EXPECT_EQ(name_msg.find('\x1b'), std::string::npos);
}

TEST(ArrayFile, BadMagicIsRejected) {
  test::TempDir dir;
  const std::string path = write_sample(dir);
  auto bytes = read_bytes(path);
  bytes[0] = 'X';
  write_bytes(path, bytes);
  EXPECT_NE(test::error_of<InputError>([&] { ArrayFileReader r(path); }).find("bad magic"),
            std::string::npos);
}

TEST(ArrayFile, EveryTruncationIsRejected) {
  test::TempDir dir;
  const std::string path = write_sample(dir);
  const auto bytes = read_bytes(path);
  for (size_t len = 0; len < bytes.size(); ++len) {
    write_bytes(path, std::vector<char>(bytes.begin(), bytes.begin() + len));
    const std::string msg = test::error_of<InputError>([&] { ArrayFileReader r(path); });
    EXPECT_FALSE(msg.empty()) << "truncated at " << len << " bytes was accepted";
  }
}

TEST(ArrayFile, CorruptedPayloadFailsTheChecksum) {
  test::TempDir dir;
  const std::string path = write_sample(dir);
  auto bytes = read_bytes(path);
  bytes[bytes.size() - 1] ^= 0x10;  // last payload byte (of "longs", the last array by name)
  write_bytes(path, bytes);
  const std::string msg = test::error_of<InputError>([&] { ArrayFileReader r(path); });
  EXPECT_NE(msg.find("array 'longs': checksum mismatch"), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(ArrayFile, TrailingBytesAreRejected) {
  test::TempDir dir;
  const std::string path = write_sample(dir);
  auto bytes = read_bytes(path);
  bytes.push_back(0);
  write_bytes(path, bytes);
  EXPECT_NE(test::error_of<InputError>([&] { ArrayFileReader r(path); }).find("trailing"),
            std::string::npos);
}

TEST(ArrayFile, MissingFileIsAnInputError) {
  test::TempDir dir;
  EXPECT_NE(test::error_of<InputError>([&] {
              ArrayFileReader r(dir.str("none.bin"));
            }).find("cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace adaqp
