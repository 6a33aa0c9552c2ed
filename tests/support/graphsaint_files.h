// Test helpers that write small datasets in the GraphSAINT layout: the .npy members of
// adj_full.npz are zipped with libzip (deflate, as scipy.sparse.save_npz writes them, or stored),
// the JSON files are written as text, so that each test can change exactly one member or file.
#pragma once

#include <gtest/gtest.h>
#include <zip.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/graph/graph.h"
#include "dataset_files.h"

namespace adaqp::test {

// Writes a zip archive of `members` (name -> bytes) at `path`, each member deflate-compressed or
// stored.
inline void write_zip(const std::string& path, const FileMap& members, bool deflate) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(archive, nullptr) << "cannot create " << path << ": libzip error " << error;
  for (const auto& [name, bytes] : members) {
    // `members` outlives zip_close, so the source can borrow the bytes.
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    ASSERT_NE(source, nullptr) << zip_strerror(archive);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), source, ZIP_FL_OVERWRITE);
    if (index < 0) zip_source_free(source);
    ASSERT_GE(index, 0) << zip_strerror(archive);
    ASSERT_EQ(zip_set_file_compression(archive, index, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0),
              0)
        << zip_strerror(archive);
  }
  ASSERT_EQ(zip_close(archive), 0) << zip_strerror(archive);
}

// A GraphSAINT directory: the members of adj_full.npz and the other files.
struct GraphSaintFiles {
  FileMap npz;    // format.npy, shape.npy, indptr.npy, indices.npy, data.npy
  FileMap files;  // feats.npy, class_map.json, role.json
  bool deflate = true;
};

// The tiny graph of dataset_files.h (4 nodes, edges 0->1, 1->2, 2->3, 3->0, 1->0; labels 0 1 2 1;
// train {0, 1}, valid {2}, test {3}) in the GraphSAINT layout. Row i of the matrix holds the
// sources of node i: indptr [0 2 3 4 5], indices [3 1 0 1 2] (row 0 unsorted, as a SciPy matrix
// may be). int32 indices and int64 indptr as SciPy writes them for small matrices; float64
// features; the class map's keys and the training role out of order.
inline GraphSaintFiles tiny_graphsaint_files() {
  GraphSaintFiles d;
  d.npz = {
      {"format.npy", npy_bytes<char>("|S3", "()", {'c', 's', 'r'})},
      {"shape.npy", npy_bytes<int64_t>("<i8", "(2,)", {4, 4})},
      {"indptr.npy", npy_bytes<int64_t>("<i8", "(5,)", {0, 2, 3, 4, 5})},
      {"indices.npy", npy_bytes<int32_t>("<i4", "(5,)", {3, 1, 0, 1, 2})},
      {"data.npy", npy_bytes<float>("<f4", "(5,)", {1, 1, 1, 1, 1})},
  };
  d.files = {
      {"feats.npy", npy_bytes<double>("<f8", "(4, 3)", {1, 0, 2, 0.5, -1.25, 0, 3, 3, 3, 0, 0, 0})},
      {"class_map.json", R"({"3": 1, "0": 0, "2": 2, "1": 1})"},
      {"role.json", R"({"tr": [1, 0], "va": [2], "te": [3]})"},
  };
  return d;
}

// `g` (single-label) in the GraphSAINT layout: int64 CSR members, float32 features.
inline GraphSaintFiles graphsaint_files_of(const Graph& g) {
  GraphSaintFiles d;
  const std::string n = std::to_string(g.num_nodes);
  d.npz = {
      {"format.npy", npy_bytes<char>("|S3", "()", {'c', 's', 'r'})},
      {"shape.npy", npy_bytes<int64_t>("<i8", "(2,)", {g.num_nodes, g.num_nodes})},
      {"indptr.npy",
       npy_bytes<int64_t>("<i8", "(" + std::to_string(g.num_nodes + 1) + ",)", g.indptr)},
      {"indices.npy",
       npy_bytes<int64_t>("<i8", "(" + std::to_string(g.num_edges()) + ",)", g.indices)},
      {"data.npy", npy_bytes<float>("<f4", "(" + std::to_string(g.num_edges()) + ",)",
                                    std::vector<float>(g.indices.size(), 1.0f))},
  };
  std::string classes = "{", roles = "{";
  for (int64_t v = 0; v < g.num_nodes; ++v)
    classes += (v ? ", \"" : "\"") + std::to_string(v) + "\": " + std::to_string(g.labels[v]);
  const auto ids = [](const std::vector<int64_t>& list) {
    std::string text = "[";
    for (size_t i = 0; i < list.size(); ++i) text += (i ? ", " : "") + std::to_string(list[i]);
    return text + "]";
  };
  roles += "\"tr\": " + ids(g.train) + ", \"va\": " + ids(g.valid) + ", \"te\": " + ids(g.test);
  d.files = {
      {"feats.npy",
       npy_bytes<float>("<f4", "(" + n + ", " + std::to_string(g.feat_dim) + ")", g.features)},
      {"class_map.json", classes + "}"},
      {"role.json", roles + "}"},
  };
  return d;
}

inline void write_graphsaint(const std::string& dir, const GraphSaintFiles& d) {
  write_zip(dir + "/adj_full.npz", d.npz, d.deflate);
  write_files(dir, d.files);
}

}  // namespace adaqp::test
