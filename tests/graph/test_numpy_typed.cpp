// The NumPy layout with types (dataset.h: node_types.json, node_type_offsets.npy, edge_type.npy):
// the tiny ogbn-mag-shaped graph written by save_numpy loads back equal, types and all, and each
// malformed variant of the three typed files is one clear error naming the file, the index or key,
// and the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "dataset_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

using ::testing::HasSubstr;

// The tiny typed graph (dataset_files.h) in the NumPy layout, in `dir`.
Graph write_typed_numpy(const test::TempDir& tmp, const std::string& dir) {
  const std::string ogb = tmp.str("tiny-mag");
  test::write_ogb(ogb, test::tiny_hetero_text());
  Graph g = load_ogb(ogb, "");
  save_numpy(g, dir);
  return g;
}

TEST(NumpyTyped, RoundTripsTheTypedGraph) {
  test::TempDir tmp;
  const std::string dir = tmp.str("numpy");
  const Graph g = write_typed_numpy(tmp, dir);
  const Graph back = load_numpy(dir);
  EXPECT_EQ(back.node_types, g.node_types);
  EXPECT_EQ(back.type_offsets, g.type_offsets);
  EXPECT_EQ(back.relations, g.relations);
  EXPECT_EQ(back.indices, g.indices);
  EXPECT_EQ(back.edge_relation, g.edge_relation);
  EXPECT_EQ(fingerprint(back), fingerprint(g));
}

// Edges in any order: the loader sorts each row by (source, relation), keeping every edge's
// relation with it. The tiny graph with author 1 writing paper 1 too (paper 1's row then mixes
// writes and cites), its edge_index.npy and edge_type.npy written with their columns reversed.
TEST(NumpyTyped, EdgesInAnyOrderKeepTheirRelations) {
  test::TempDir tmp;
  const std::string ogb = tmp.str("tiny-mag"), dir = tmp.str("numpy");
  test::FileMap text = test::tiny_hetero_text();
  text["raw/relations/author___writes___paper/edge.csv.gz"] = "0,0\n1,0\n2,3\n1,1\n";
  text["raw/relations/author___writes___paper/num-edge-list.csv.gz"] = "4\n";
  test::write_ogb(ogb, text);
  const Graph g = load_ogb(ogb, "");
  save_numpy(g, dir);
  const int64_t e = g.num_edges();
  std::vector<int64_t> edge_index(2 * e), edge_type(e);
  for (int64_t v = 0, k = e - 1; v < g.num_nodes; ++v) {
    for (int64_t j = g.indptr[v]; j < g.indptr[v + 1]; ++j, --k) {
      edge_index[k] = g.indices[j];
      edge_index[e + k] = v;
      edge_type[k] = g.edge_relation[j];
    }
  }
  const std::string shape = std::to_string(e);
  test::write_files(dir,
                    {{"edge_index.npy", test::npy_bytes("<i8", "(2, " + shape + ")", edge_index)},
                     {"edge_type.npy", test::npy_bytes("<i8", "(" + shape + ",)", edge_type)}});
  const Graph back = load_numpy(dir);
  EXPECT_EQ(back.indptr, g.indptr);
  EXPECT_EQ(back.indices, g.indices);
  EXPECT_EQ(back.edge_relation, g.edge_relation);
  // Paper 1 (node 4): author 1 by writes (0), papers 0 and 2 (nodes 3, 5) by cites (1).
  EXPECT_EQ(std::vector<int32_t>(back.edge_relation.begin() + back.indptr[4],
                                 back.edge_relation.begin() + back.indptr[5]),
            (std::vector<int32_t>{0, 1, 1}));
}

struct Case {
  const char* name;
  const char* file;
  std::string content;
  const char* message;  // expected after "<dir>/"
};

TEST(NumpyTyped, EachMalformedTypedFileIsOneClearError) {
  using test::npy_bytes;
  const std::vector<Case> cases = {
      {"malformed JSON", "node_types.json", "{\"node_types\": [",
       "node_types.json: byte 17: malformed JSON"},
      {"a repeated key", "node_types.json",
       R"({"node_types": ["a"], "node_types": ["author", "paper", "topic"], "relations": []})",
       "node_types.json: key 'node_types': appears twice in one object"},
      {"nested past the bound", "node_types.json",
       "{\"node_types\": " + std::string(100000, '[') + std::string(100000, ']') + "}",
       "node_types.json: nested deeper than 8 levels"},
      {"unknown type", "node_types.json",
       R"({"node_types": ["author", "paper", "topic"], "relations": [["author", "writes",
           "paper"], ["paper", "cites", "paper"], ["paper", "has_topic", "field"]]})",
       "node_types.json: relations[2]: names node type 'field', which node_types does not list"},
      {"relation not a triplet", "node_types.json",
       R"({"node_types": ["author", "paper", "topic"], "relations": [["author", "writes"]]})",
       "node_types.json: relations[0]: must be [source type, name, target type]"},
      {"offsets of the wrong length", "node_type_offsets.npy",
       npy_bytes<int64_t>("<i8", "(3,)", {0, 3, 9}),
       "node_type_offsets.npy: has dtype <i8 and shape (3,), expected int32 or int64 [4]"},
      {"offsets not ending at N", "node_type_offsets.npy",
       npy_bytes<int64_t>("<i8", "(4,)", {0, 3, 7, 8}),
       "node_type_offsets.npy: index 3: value 8: the offsets must ascend from 0 to N = 9"},
      {"offsets descending", "node_type_offsets.npy",
       npy_bytes<int64_t>("<i8", "(4,)", {0, 7, 3, 9}),
       "node_type_offsets.npy: index 2: value 3: the offsets must ascend"},
      {"edge types of the wrong length", "edge_type.npy",
       npy_bytes<int64_t>("<i8", "(8,)", {0, 0, 1, 1, 1, 0, 2, 2}),
       "edge_type.npy: has dtype <i8 and shape (8,), expected int32 or int64 [9]"},
      {"relation out of range", "edge_type.npy",
       npy_bytes<int64_t>("<i8", "(9,)", {0, 0, 1, 1, 1, 0, 2, 2, 3}),
       "edge_type.npy: index 8: relation 3 is out of range [0, 3)"},
      {"edge joining other types", "edge_type.npy",
       npy_bytes<int64_t>("<i8", "(9,)", {1, 0, 1, 1, 1, 0, 2, 2, 2}),
       "but relation 1 ('cites') joins 'paper' and 'paper'"},
  };
  for (const Case& c : cases) {
    test::TempDir tmp;
    const std::string dir = tmp.str("numpy");
    write_typed_numpy(tmp, dir);
    test::write_file(dir + "/" + c.file, c.content);
    std::string error = "no error";
    try {
      load_numpy(dir);
    } catch (const InputError& e) {
      error = e.what();
    }
    EXPECT_THAT(error, HasSubstr(c.message)) << c.name;
    EXPECT_THAT(error, HasSubstr(dir + "/" + c.file)) << c.name;
  }
}

}  // namespace
}  // namespace adaqp
