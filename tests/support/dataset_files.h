// Test helpers that write small datasets in the OGB raw layout and the NumPy layout, so that each
// test can corrupt exactly one file before loading.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace adaqp::test {

// Relative path inside a dataset directory -> file content.
using FileMap = std::map<std::string, std::string>;

inline void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline void write_gz(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << "cannot create " << path;
  const int written =
      text.empty() ? 0 : gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  const int closed = gzclose(f);
  ASSERT_EQ(written, static_cast<int>(text.size())) << path;
  ASSERT_EQ(closed, Z_OK) << path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The tiny graph every format test uses: 4 nodes, 3 features, 3 classes, edges (src -> dst)
// 0->1, 1->2, 2->3, 3->0, 1->0; labels 0 1 2 1; train {0, 1}, valid {2}, test {3}.
// Its CSR by destination: indptr [0 2 3 4 5], indices [1 3 0 1 2].
inline FileMap tiny_ogb_text() {
  return {
      {"raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n1,0\n"},
      {"raw/node-feat.csv.gz", "1,0,2\n0.5,-1.25,0\n3,3,3\n0,0,0\n"},
      {"raw/node-label.csv.gz", "0\n1\n2\n1\n"},
      {"raw/num-node-list.csv.gz", "4\n"},
      {"raw/num-edge-list.csv.gz", "5\n"},
      {"split/main/train.csv.gz", "0\n1\n"},
      {"split/main/valid.csv.gz", "2\n"},
      {"split/main/test.csv.gz", "3\n"},
  };
}

// A tiny graph in OGB's heterogeneous layout, typed as ogbn-mag is: node types author (3), paper
// (4, the only ones with features and labels) and topic (2), listed out of order; relations
// (author, writes, paper), (paper, cites, paper), (paper, has_topic, topic), also out of order.
// Sorted, the types take ids author 0-2, paper 3-6, topic 7-8, and the relations are numbered
// writes 0, cites 1, has_topic 2. Its CSR by destination: indptr [0 0 0 0 2 4 5 6 7 9], indices
// [0 1 3 5 6 2 3 4 6], relations [0 0 1 1 1 0 2 2 2]; split train {3, 4}, valid {5}, test {6}.
inline FileMap tiny_hetero_text() {
  return {
      {"raw/num-node-dict.csv.gz", "paper,author,topic\n4,3,2\n"},
      {"raw/triplet-type-list.csv.gz",
       "paper,cites,paper\nauthor,writes,paper\npaper,has_topic,topic\n"},
      {"raw/relations/author___writes___paper/edge.csv.gz", "0,0\n1,0\n2,3\n"},
      {"raw/relations/author___writes___paper/num-edge-list.csv.gz", "3\n"},
      {"raw/relations/paper___cites___paper/edge.csv.gz", "0,1\n2,1\n3,2\n"},
      {"raw/relations/paper___cites___paper/num-edge-list.csv.gz", "3\n"},
      {"raw/relations/paper___has_topic___topic/edge.csv.gz", "0,0\n1,1\n3,1\n"},
      {"raw/relations/paper___has_topic___topic/num-edge-list.csv.gz", "3\n"},
      {"raw/node-feat/paper/node-feat.csv.gz", "1,2\n3,4\n5,6\n7,8\n"},
      {"raw/node-label/paper/node-label.csv.gz", "0\n1\n2\n1\n"},
      {"split/time/paper/train.csv.gz", "0\n1\n"},
      {"split/time/paper/valid.csv.gz", "2\n"},
      {"split/time/paper/test.csv.gz", "3\n"},
  };
}

// gzip-compresses every file of `text` into `dir`.
inline void write_ogb(const std::string& dir, const FileMap& text) {
  for (const auto& [name, content] : text) write_gz(dir + "/" + name, content);
}

inline void write_files(const std::string& dir, const FileMap& files) {
  for (const auto& [name, content] : files) write_file(dir + "/" + name, content);
}

// A .npy file with the given header fields; the payload is the raw bytes of `values`.
template <typename T>
std::string npy_bytes(const std::string& descr, const std::string& shape,
                      const std::vector<T>& values, bool fortran = false, int major = 1) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  const size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const size_t len = header.size();
  for (size_t i = 0; i < preamble - 8; ++i)
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  return out;
}

// The tiny graph above in the NumPy layout: int32 edge_index, int64 labels, an int64 index array
// for train, and bool masks for valid and test.
inline FileMap tiny_numpy_files() {
  return {
      {"edge_index.npy", npy_bytes<int32_t>("<i4", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0})},
      {"feat.npy", npy_bytes<float>("<f4", "(4, 3)", {1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0})},
      {"label.npy", npy_bytes<int64_t>("<i8", "(4,)", {0, 1, 2, 1})},
      {"train.npy", npy_bytes<int64_t>("<i8", "(2,)", {0, 1})},
      {"valid.npy", npy_bytes<uint8_t>("|b1", "(4,)", {0, 0, 1, 0})},
      {"test.npy", npy_bytes<uint8_t>("|b1", "(4,)", {0, 0, 0, 1})},
  };
}

}  // namespace adaqp::test
