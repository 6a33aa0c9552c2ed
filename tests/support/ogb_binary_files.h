// Test helpers that write small datasets in the OGB binary raw layout as ogb.io.DatasetSaver
// writes them: in one FileMap, a key "raw/data.npz/<member>.npy" is a member of that archive
// (zipped with libzip, deflated as numpy.savez_compressed writes it, or stored as numpy.savez
// does), any other key a file, gzip-compressed when it ends in .gz; so that each test can change
// exactly one member or file.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "adaqp/graph/graph.h"
#include "dataset_files.h"
#include "graphsaint_files.h"

namespace adaqp::test {

// The tiny graph of dataset_files.h (4 nodes, edges 0->1, 1->2, 2->3, 3->0, 1->0; labels 0 1 2 1;
// train {0, 1}, valid {2}, test {3}) in the binary layout: int64 edge_index and counts, float32
// features, int64 labels [N, 1] (DatasetSaver.save_target_labels takes [N, tasks]).
inline FileMap tiny_ogb_binary_files() {
  return {
      {"raw/data.npz/edge_index.npy",
       npy_bytes<int64_t>("<i8", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0})},
      {"raw/data.npz/node_feat.npy",
       npy_bytes<float>("<f4", "(4, 3)", {1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0})},
      {"raw/data.npz/num_nodes_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {4})},
      {"raw/data.npz/num_edges_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {5})},
      {"raw/node-label.npz/node_label.npy", npy_bytes<int64_t>("<i8", "(4, 1)", {0, 1, 2, 1})},
      {"split/main/train.csv.gz", "0\n1\n"},
      {"split/main/valid.csv.gz", "2\n"},
      {"split/main/test.csv.gz", "3\n"},
  };
}

inline std::string id_lines(const std::vector<int64_t>& ids) {
  std::string text;
  for (int64_t v : ids) text += std::to_string(v) + "\n";
  return text;
}

// The edges of `g` (CSR by destination) as sources and targets.
inline void edges_of(const Graph& g, std::vector<int64_t>& src, std::vector<int64_t>& dst) {
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      src.push_back(g.indices[e]);
      dst.push_back(v);
    }
  }
}

// `g` (single-label) in the binary layout, split "main".
inline FileMap ogb_binary_files_of(const Graph& g) {
  std::vector<int64_t> edge_index, dst;
  edges_of(g, edge_index, dst);
  edge_index.insert(edge_index.end(), dst.begin(), dst.end());
  const std::string n = std::to_string(g.num_nodes);
  return {
      {"raw/data.npz/edge_index.npy",
       npy_bytes<int64_t>("<i8", "(2, " + std::to_string(g.num_edges()) + ")", edge_index)},
      {"raw/data.npz/node_feat.npy",
       npy_bytes<float>("<f4", "(" + n + ", " + std::to_string(g.feat_dim) + ")", g.features)},
      {"raw/data.npz/num_nodes_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {g.num_nodes})},
      {"raw/data.npz/num_edges_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {g.num_edges()})},
      {"raw/node-label.npz/node_label.npy", npy_bytes<int64_t>("<i8", "(" + n + ", 1)", g.labels)},
      {"split/main/train.csv.gz", id_lines(g.train)},
      {"split/main/valid.csv.gz", id_lines(g.valid)},
      {"split/main/test.csv.gz", id_lines(g.test)},
  };
}

// `g` (single-label) in the CSV layout (uncompressed text for write_ogb), split "main"; features
// in their shortest exact decimal form.
inline FileMap ogb_text_of(const Graph& g) {
  std::vector<int64_t> src, dst;
  edges_of(g, src, dst);
  std::string edges, features, labels;
  for (size_t e = 0; e < src.size(); ++e)
    edges += std::to_string(src[e]) + "," + std::to_string(dst[e]) + "\n";
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t f = 0; f < g.feat_dim; ++f)
      features += fmt::format("{}{}", f ? "," : "", g.features[v * g.feat_dim + f]);
    features += "\n";
    labels += std::to_string(g.labels[v]) + "\n";
  }
  return {
      {"raw/edge.csv.gz", edges},
      {"raw/node-feat.csv.gz", features},
      {"raw/node-label.csv.gz", labels},
      {"raw/num-node-list.csv.gz", std::to_string(g.num_nodes) + "\n"},
      {"raw/num-edge-list.csv.gz", std::to_string(g.num_edges()) + "\n"},
      {"split/main/train.csv.gz", id_lines(g.train)},
      {"split/main/valid.csv.gz", id_lines(g.valid)},
      {"split/main/test.csv.gz", id_lines(g.test)},
  };
}

// Writes `files` into `dir`: members grouped into their archives, each deflated or stored.
inline void write_ogb_binary(const std::string& dir, const FileMap& files, bool deflate) {
  std::map<std::string, FileMap> archives;
  for (const auto& [name, bytes] : files) {
    const size_t npz = name.find(".npz/");
    if (npz != std::string::npos)
      archives[name.substr(0, npz + 4)][name.substr(npz + 5)] = bytes;
    else if (name.size() > 3 && name.compare(name.size() - 3, 3, ".gz") == 0)
      write_gz(dir + "/" + name, bytes);
    else
      write_file(dir + "/" + name, bytes);
  }
  for (const auto& [archive, members] : archives) write_zip(dir + "/" + archive, members, deflate);
}

}  // namespace adaqp::test
