// OGB's heterogeneous raw layout (graph/dataset.h): a tiny ogbn-mag-shaped dataset written here
// loads exactly (types, relations, the homogeneous view's CSR, features, labels, splits), the
// reverse relations and per-type self-loops keep every edge's relation, each malformed variant is
// one InputError naming its file and value, and the transforms refuse the wrong kind of graph.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "dataset_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

using test::FileMap;
using test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> relation_names(const Graph& g) {
  std::vector<std::string> names;
  for (const Relation& r : g.relations) {
    names.push_back(g.node_types[r.src_type] + "," + r.name + "," + g.node_types[r.dst_type]);
  }
  return names;
}

TEST(OgbHeteroLoader, LoadsTinyDatasetExactly) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-mag");
  test::write_ogb(dir, test::tiny_hetero_text());
  const Graph g = load_ogb(dir, "");
  EXPECT_EQ(g.name, "tiny-mag");
  EXPECT_THAT(g.node_types, ElementsAre("author", "paper", "topic"));
  EXPECT_THAT(g.type_offsets, ElementsAre(0, 3, 7, 9));
  EXPECT_THAT(relation_names(g),
              ElementsAre("author,writes,paper", "paper,cites,paper", "paper,has_topic,topic"));
  EXPECT_EQ(g.num_nodes, 9);
  EXPECT_THAT(g.indptr, ElementsAre(0, 0, 0, 0, 2, 4, 5, 6, 7, 9));
  EXPECT_THAT(g.indices, ElementsAre(0, 1, 3, 5, 6, 2, 3, 4, 6));
  EXPECT_THAT(g.edge_relation, ElementsAre(0, 0, 1, 1, 1, 0, 2, 2, 2));
  EXPECT_EQ(g.feat_dim, 2);
  EXPECT_THAT(g.features, ElementsAre(0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0));
  EXPECT_EQ(g.num_classes, 3);
  EXPECT_THAT(g.labels, ElementsAre(0, 0, 0, 0, 1, 2, 1, 0, 0));
  EXPECT_THAT(g.train, ElementsAre(3, 4));
  EXPECT_THAT(g.valid, ElementsAre(5));
  EXPECT_THAT(g.test, ElementsAre(6));
  g.validate(dir);
  // The types are part of the dataset's identity: the same view without them is another dataset.
  Graph untyped = g;
  untyped.node_types.clear();
  untyped.type_offsets.clear();
  untyped.relations.clear();
  untyped.edge_relation.clear();
  EXPECT_NE(fingerprint(g).substr(0, 8), fingerprint(untyped).substr(0, 8));
  EXPECT_EQ(fingerprint(g).substr(8), fingerprint(untyped).substr(8));
}

// A within-type relation that already holds both directions of a pair (cites 0 -> 1 and 1 -> 0):
// add_reverse adds each edge's reverse but those already there, so no (source, destination,
// relation) occurs twice: cites 4 edges + 2 reverses, 18 edges in all (20 with the duplicates).
TEST(OgbHeteroLoader, ReverseOfAWithinTypeRelationDropsEdgesAlreadyThere) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-mag");
  FileMap files = test::tiny_hetero_text();
  files["raw/relations/paper___cites___paper/edge.csv.gz"] = "0,1\n2,1\n3,2\n1,0\n";
  files["raw/relations/paper___cites___paper/num-edge-list.csv.gz"] = "4\n";
  test::write_ogb(dir, files);
  DatasetSpec spec;
  spec.path = dir;
  spec.transform.add_reverse = true;
  const Graph g = load_dataset(spec);
  EXPECT_EQ(g.num_edges(), 18);
  std::set<std::tuple<int64_t, int64_t, int32_t>> seen;
  int64_t cites = 0;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      EXPECT_TRUE(seen.insert({g.indices[e], v, g.edge_relation[e]}).second)
          << g.indices[e] << " -> " << v << " of relation " << g.edge_relation[e] << " twice";
      cites += g.relations[g.edge_relation[e]].name == "cites" ? 1 : 0;
    }
  }
  EXPECT_EQ(cites, 6);
}

// (source, destination, relation name) of every edge of g.
std::multiset<std::tuple<int64_t, int64_t, std::string>> named_edges(const Graph& g) {
  std::multiset<std::tuple<int64_t, int64_t, std::string>> edges;
  for (int64_t v = 0; v < g.num_nodes; ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e)
      edges.insert({g.indices[e], v, g.relations[g.edge_relation[e]].name});
  }
  return edges;
}

// Data that holds the reverse of a relation between two types already (writes' as rev_writes, as
// PyG's ToUndirected writes it): add_reverse leaves that pair as it is, neither doubling
// rev_writes nor adding rev_rev_writes, and gives the other relations their reverses: the graph
// the data without rev_writes gives.
TEST(OgbHeteroLoader, ReverseRelationsTheDataHoldsAreKeptAsTheyAre) {
  TempDir tmp;
  const std::string plain = tmp.str("plain"), with_reverse = tmp.str("with-reverse");
  test::write_ogb(plain, test::tiny_hetero_text());
  FileMap files = test::tiny_hetero_text();
  files["raw/triplet-type-list.csv.gz"] =
      "paper,cites,paper\nauthor,writes,paper\npaper,has_topic,topic\npaper,rev_writes,author\n";
  files["raw/relations/paper___rev_writes___author/edge.csv.gz"] = "0,0\n0,1\n3,2\n";
  files["raw/relations/paper___rev_writes___author/num-edge-list.csv.gz"] = "3\n";
  test::write_ogb(with_reverse, files);
  DatasetSpec spec;
  spec.transform.add_reverse = true;
  spec.path = plain;
  const Graph want = load_dataset(spec);
  spec.path = with_reverse;
  const Graph g = load_dataset(spec);
  EXPECT_THAT(relation_names(g),
              ElementsAre("author,writes,paper", "paper,cites,paper", "paper,has_topic,topic",
                          "paper,rev_writes,author", "topic,rev_has_topic,paper"));
  EXPECT_EQ(g.num_edges(), 18);
  EXPECT_EQ(named_edges(g), named_edges(want));
}

TEST(OgbHeteroLoader, ReverseRelationsAndSelfLoopsKeepEveryEdgesRelation) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-mag");
  test::write_ogb(dir, test::tiny_hetero_text());
  DatasetSpec spec;
  spec.path = dir;
  spec.transform.add_reverse = true;
  const Graph g = load_dataset(spec);
  EXPECT_THAT(relation_names(g),
              ElementsAre("author,writes,paper", "paper,cites,paper", "paper,has_topic,topic",
                          "paper,rev_writes,author", "topic,rev_has_topic,paper"));
  // cites is within one type: its reverse edges join it (3 more); the two others gain 3 each.
  EXPECT_EQ(g.num_edges(), 18);
  // Author 0 (row 0) now receives paper 0's rev_writes edge; paper 1 (row 4) its cites edges
  // from papers 0 and 2 and its reverse edge to topic 1 as rev_has_topic from row 8.
  EXPECT_THAT(
      std::vector<int64_t>(g.indices.begin() + g.indptr[0], g.indices.begin() + g.indptr[1]),
      ElementsAre(3));
  EXPECT_EQ(g.edge_relation[g.indptr[0]], 3);
  spec.transform.self_loops = true;
  const Graph looped = load_dataset(spec);
  EXPECT_EQ(looped.num_edges(), 18 + 9);
  ASSERT_EQ(looped.relations.size(), 8u);
  for (int32_t t = 0; t < 3; ++t) {
    const Relation self{t, "self", t};
    EXPECT_EQ(looped.relations[5 + t], self);
  }
  for (int64_t v = 0; v < looped.num_nodes; ++v) {
    int loops = 0;
    for (int64_t e = looped.indptr[v]; e < looped.indptr[v + 1]; ++e) {
      if (looped.indices[e] != v) continue;
      ++loops;
      EXPECT_EQ(looped.edge_relation[e], 5 + looped.node_type(v)) << "node " << v;
    }
    EXPECT_EQ(loops, 1) << "node " << v;
  }
}

TEST(OgbHeteroLoader, TransformsRefuseTheWrongKindOfGraph) {
  TempDir tmp;
  const std::string hetero = tmp.str("tiny-mag"), homo = tmp.str("tiny-ogb");
  test::write_ogb(hetero, test::tiny_hetero_text());
  test::write_ogb(homo, test::tiny_ogb_text());
  DatasetSpec spec;
  spec.path = hetero;
  spec.transform.symmetrize = true;
  EXPECT_THROW(
      {
        try {
          load_dataset(spec);
        } catch (const ConfigError& e) {
          EXPECT_THAT(e.what(), HasSubstr("use dataset.add_reverse"));
          throw;
        }
      },
      ConfigError);
  spec.path = homo;
  spec.transform.symmetrize = false;
  spec.transform.add_reverse = true;
  EXPECT_THROW(
      {
        try {
          load_dataset(spec);
        } catch (const ConfigError& e) {
          EXPECT_THAT(e.what(), HasSubstr("tiny-ogb is homogeneous: use dataset.symmetrize"));
          throw;
        }
      },
      ConfigError);
}

// Each case changes (or removes, with content "<none>") one file of the tiny dataset.
struct Malformed {
  const char* name;
  const char* file;
  const char* content;
  const char* message;  // expected after "<dir>/<file>"
};

TEST(OgbHeteroLoader, EachMalformedVariantIsOneClearError) {
  const Malformed cases[] = {
      {"counts ragged", "raw/num-node-dict.csv.gz", "paper,author,topic\n4,3\n",
       "raw/num-node-dict.csv.gz: line 2: has 2 columns, expected 3 (one count per node type)"},
      {"count negative", "raw/num-node-dict.csv.gz", "paper,author,topic\n4,-3,2\n",
       "raw/num-node-dict.csv.gz: line 2: node type 'author': count -3 is negative"},
      {"count past 2^31 nodes", "raw/num-node-dict.csv.gz", "paper,author,topic\n4,3,3000000000\n",
       "raw/num-node-dict.csv.gz: line 2: node type 'topic': count 3000000000 takes the graph to "
       "2^31 nodes or more"},
      {"relation name with ___", "raw/triplet-type-list.csv.gz",
       "paper,cites,paper\nauthor,writes___x,paper\npaper,has_topic,topic\n",
       "raw/triplet-type-list.csv.gz: line 2: relation name 'writes___x' is empty or holds '/' or "
       "'___'"},
      {"type twice", "raw/num-node-dict.csv.gz", "paper,author,paper\n4,3,2\n",
       "raw/num-node-dict.csv.gz: line 1: node type 'paper' twice"},
      {"unknown type in a relation", "raw/triplet-type-list.csv.gz",
       "paper,cites,paper\nauthor,writes,paper\npaper,has_topic,field\n",
       "raw/triplet-type-list.csv.gz: line 3: node type 'field' is not in num-node-dict.csv.gz"},
      {"relation twice", "raw/triplet-type-list.csv.gz",
       "paper,cites,paper\nauthor,writes,paper\npaper,cites,paper\npaper,has_topic,topic\n",
       "raw/triplet-type-list.csv.gz: line 3: relation 'paper,cites,paper' twice"},
      {"edge source out of its type", "raw/relations/author___writes___paper/edge.csv.gz",
       "0,0\n3,0\n2,3\n",
       "raw/relations/author___writes___paper/edge.csv.gz: line 2: source node id 3 is out of "
       "range [0, 3) of node type 'author'"},
      {"edge count disagrees", "raw/relations/paper___cites___paper/num-edge-list.csv.gz", "4\n",
       "raw/relations/paper___cites___paper/edge.csv.gz: line 3: file ends after 3 lines, but "
       "num-edge-list.csv.gz says 4"},
      {"relation file missing", "raw/relations/paper___has_topic___topic/edge.csv.gz", "<none>",
       "raw/relations/paper___has_topic___topic/edge.csv.gz"},
      {"feature row ragged", "raw/node-feat/paper/node-feat.csv.gz", "1,2\n3,4\n5\n7,8\n",
       "raw/node-feat/paper/node-feat.csv.gz: line 3: has 1 column, expected 2 (as on line 1)"},
      {"feature not finite", "raw/node-feat/paper/node-feat.csv.gz", "1,2\n3,4\n5,nan\n7,8\n",
       "raw/node-feat/paper/node-feat.csv.gz: line 3: column 2: 'nan' is not finite"},
      {"label count disagrees", "raw/node-label/paper/node-label.csv.gz", "0\n1\n2\n",
       "raw/node-label/paper/node-label.csv.gz: line 3: file ends after 3 lines, but "
       "num-node-dict.csv.gz says 4"},
      {"split id out of its type", "split/time/paper/test.csv.gz", "4\n",
       "split/time/paper/test.csv.gz: line 1: node id 4 is out of range [0, 4)"},
      {"split of an unlabelled type", "split/time/author/train.csv.gz", "0\n",
       "split/time/author: splits node type 'author', which has no "
       "raw/node-label/author/node-label.csv.gz"},
      {"no features at all", "raw/node-feat/paper/node-feat.csv.gz", "<none>",
       "raw/node-feat: no node type has node-feat.csv.gz"},
      {"features of no node type", "raw/node-feat/Paper/node-feat.csv.gz", "1,2\n",
       "raw/node-feat/Paper: node type 'Paper' is not in num-node-dict.csv.gz (types: "},
      {"labels of no node type", "raw/node-label/papers/node-label.csv.gz", "0\n",
       "raw/node-label/papers: node type 'papers' is not in num-node-dict.csv.gz (types: "},
  };
  for (const Malformed& c : cases) {
    TempDir tmp;
    const std::string dir = tmp.str("mag");
    FileMap files = test::tiny_hetero_text();
    if (std::string(c.content) == "<none>") {
      files.erase(c.file);
    } else {
      files[c.file] = c.content;
    }
    test::write_ogb(dir, files);
    std::string error = "no error";
    try {
      load_ogb(dir, "");
    } catch (const InputError& e) {
      error = e.what();
    }
    EXPECT_THAT(error, HasSubstr(dir + "/" + c.message)) << c.name;
  }
}

// A type without nodes fixes neither the features' width nor the labels' kind, whatever its
// (empty) files say, nor does it shift the other types' ids out of name order.
TEST(OgbHeteroLoader, ATypeWithoutNodesLoads) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-mag");
  FileMap files = test::tiny_hetero_text();
  files["raw/num-node-dict.csv.gz"] = "paper,author,topic,aaa\n4,3,2,0\n";
  files["raw/node-feat/aaa/node-feat.csv.gz"] = "";
  files["raw/node-label/aaa/node-label.csv.gz"] = "";
  test::write_ogb(dir, files);
  const Graph g = load_ogb(dir, "");
  EXPECT_THAT(g.node_types, ElementsAre("aaa", "author", "paper", "topic"));
  EXPECT_THAT(g.type_offsets, ElementsAre(0, 0, 3, 7, 9));
  EXPECT_EQ(g.feat_dim, 2);
  g.validate(dir);
}

TEST(OgbHeteroLoader, ValidateNamesAnEdgeOutsideItsRelationsTypes) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-mag");
  test::write_ogb(dir, test::tiny_hetero_text());
  Graph g = load_ogb(dir, "");
  g.edge_relation[0] = 2;  // author 0 -> paper 0 labelled has_topic (paper -> topic)
  try {
    g.validate("tiny-mag");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("edge index 0: edge 0 -> 3 joins types 'author' and 'paper', "
                                    "but its relation 'has_topic' joins 'paper' and 'topic'"));
  }
}

}  // namespace
}  // namespace adaqp
