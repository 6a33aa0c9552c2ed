// The GraphSAINT layout: exact loads of generated directories (single- and multi-label, deflate and
// stored archives), auto-detection, and a corpus of malformed inputs, each giving one InputError
// that names the file, the member, key or index, and the value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph_slice.h"
#include "dataset_files.h"
#include "graph_expect.h"
#include "graphsaint_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

using test::GraphSaintFiles;
using test::npy_bytes;
using test::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Graph load_tiny(const GraphSaintFiles& files, const std::string& name = "tiny-saint") {
  TempDir tmp;
  const std::string dir = tmp.str(name);
  test::write_graphsaint(dir, files);
  return load_graphsaint(dir);
}

TEST(GraphSaintLoader, LoadsTinyDatasetExactly) {
  for (const bool deflate : {true, false}) {
    GraphSaintFiles files = test::tiny_graphsaint_files();
    files.deflate = deflate;
    const Graph g = load_tiny(files);
    EXPECT_EQ(g.name, "tiny-saint");
    EXPECT_EQ(g.num_nodes, 4);
    EXPECT_THAT(g.indptr, ElementsAre(0, 2, 3, 4, 5));
    EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
    EXPECT_EQ(g.feat_dim, 3);
    EXPECT_THAT(g.features, ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0));
    EXPECT_FALSE(g.multilabel);
    EXPECT_EQ(g.num_classes, 3);
    EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
    EXPECT_TRUE(g.multilabels.empty());
    EXPECT_THAT(g.train, ElementsAre(0, 1));
    EXPECT_THAT(g.valid, ElementsAre(2));
    EXPECT_THAT(g.test, ElementsAre(3));
    EXPECT_NO_THROW(g.validate("tiny"));
  }
}

TEST(GraphSaintLoader, SameGraphAsTheOtherLayouts) {
  TempDir tmp;
  test::write_files(tmp.str("npy"), test::tiny_numpy_files());
  EXPECT_EQ(fingerprint(load_tiny(test::tiny_graphsaint_files())),
            fingerprint(load_numpy(tmp.str("npy"))));
}

TEST(GraphSaintLoader, AcceptsFloat32FeaturesInt32IndptrAndPaddedFormat) {
  GraphSaintFiles files = test::tiny_graphsaint_files();
  files.files["feats.npy"] =
      npy_bytes<float>("<f4", "(4, 3)", {1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0});
  files.npz["indptr.npy"] = npy_bytes<int32_t>("<i4", "(5,)", {0, 2, 3, 4, 5});
  files.npz["shape.npy"] = npy_bytes<int32_t>("<i4", "(2,)", {4, 4});
  files.npz["format.npy"] = npy_bytes<char>("|S4", "(1,)", {'c', 's', 'r', '\0'});
  const Graph g = load_tiny(files);
  EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
  EXPECT_THAT(g.features, ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0));
}

TEST(GraphSaintLoader, ReadsMultiLabelClassMap) {
  GraphSaintFiles files = test::tiny_graphsaint_files();
  files.files["class_map.json"] =
      R"({"2": [0, 0, 0, 0], "0": [1, 0, 0, 1], "1": [0, 1, 1, 0], "3": [1, 1, 1, 1]})";
  const Graph g = load_tiny(files);
  EXPECT_TRUE(g.multilabel);
  EXPECT_EQ(g.num_classes, 4);
  EXPECT_THAT(g.multilabels, ElementsAre(1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1));
  EXPECT_TRUE(g.labels.empty());
  EXPECT_NO_THROW(g.validate("tiny"));
}

TEST(GraphSaintLoader, KeepsDuplicateEntriesAndEmptyRoles) {
  GraphSaintFiles files = test::tiny_graphsaint_files();
  files.npz["indptr.npy"] = npy_bytes<int64_t>("<i8", "(5,)", {0, 3, 3, 4, 6});
  files.npz["indices.npy"] = npy_bytes<int64_t>("<i8", "(6,)", {2, 1, 2, 3, 0, 0});
  files.files["role.json"] = R"({"tr": [3, 2, 0], "va": [], "te": [1]})";
  const Graph g = load_tiny(files);
  EXPECT_THAT(g.indptr, ElementsAre(0, 3, 3, 4, 6));
  EXPECT_THAT(g.indices, ElementsAre(1, 2, 2, 3, 0, 0));
  EXPECT_THAT(g.train, ElementsAre(0, 2, 3));
  EXPECT_TRUE(g.valid.empty());
  EXPECT_THAT(g.test, ElementsAre(1));
}

// Every rank's slice (load_graphsaint_slice) is that rank's slice of the whole graph, at 1 to 4
// ranks: the tiny graph (deflated and stored, single- and multi-label) and a generated one.
TEST(GraphSaintLoader, SlicesAreTheWholeGraphsSlices) {
  std::vector<GraphSaintFiles> cases(3, test::tiny_graphsaint_files());
  cases[1].deflate = false;
  cases[2].files["class_map.json"] =
      R"({"2": [0, 0, 0, 0], "0": [1, 0, 0, 1], "1": [0, 1, 1, 0], "3": [1, 1, 1, 1]})";
  GeneratorOptions o;
  o.num_nodes = 300;
  o.avg_degree = 6;
  o.heavy_tailed = true;
  o.seed = 4;
  cases.push_back(test::graphsaint_files_of(generate_graph(o)));
  for (size_t c = 0; c < cases.size(); ++c) {
    TempDir tmp;
    const std::string dir = tmp.str("saint");
    test::write_graphsaint(dir, cases[c]);
    const Graph g = load_graphsaint(dir);
    for (int world = 1; world <= 4; ++world) {
      for (int rank = 0; rank < world; ++rank) {
        SCOPED_TRACE("case " + std::to_string(c) + ", rank " + std::to_string(rank) + " of " +
                     std::to_string(world));
        test::expect_same_slice(load_graphsaint_slice(dir, rank, world), slice_of(g, rank, world));
      }
    }
  }
}

TEST(GraphSaintLoader, LoadDatasetDetectsTheLayout) {
  TempDir tmp;
  test::write_graphsaint(tmp.str("saint"), test::tiny_graphsaint_files());
  DatasetSpec spec;
  spec.path = tmp.str("saint");
  spec.transform.self_loops = true;
  const Graph detected = load_dataset(spec);
  EXPECT_EQ(detected.num_edges(), 9);  // 5 edges, none a self-loop, plus 4 self-loops
  spec.format = DatasetFormat::kGraphsaint;
  EXPECT_EQ(fingerprint(load_dataset(spec)), fingerprint(detected));
  spec.format = DatasetFormat::kNumpy;
  // A NumPy load of the GraphSAINT directory: NumPy's feat.npy is GraphSAINT's feats.npy.
  EXPECT_THAT(test::error_of<InputError>([&] { load_dataset(spec); }),
              ::testing::EndsWith("/saint/feat.npy: file not found"));
}

// ---- malformed inputs ---------------------------------------------------------------------------

struct MalformedSaint {
  std::string name;
  std::function<void(GraphSaintFiles&)> edit;
  std::function<void(const std::string& dir)> damage;  // on the written files, if set
  std::vector<std::string> expected;                   // substrings of the message
};

void PrintTo(const MalformedSaint& c, std::ostream* os) {
  *os << c.name;
}

std::string saint_case_name(const testing::TestParamInfo<MalformedSaint>& info) {
  return info.param.name;
}

class MalformedGraphSaint : public testing::TestWithParam<MalformedSaint> {};

// The tiny dataset with case c's edit and damage, written into tmp; its directory.
std::string write_case(const MalformedSaint& c, const TempDir& tmp) {
  const std::string dir = tmp.str("data");
  GraphSaintFiles files = test::tiny_graphsaint_files();
  if (c.edit) c.edit(files);
  test::write_graphsaint(dir, files);
  if (c.damage) c.damage(dir);
  return dir;
}

TEST_P(MalformedGraphSaint, ThrowsOneClearInputError) {
  const MalformedSaint& c = GetParam();
  TempDir tmp;
  const std::string dir = write_case(c, tmp);
  try {
    load_graphsaint(dir);
    FAIL() << "no error thrown";
  } catch (const InputError& e) {
    for (const std::string& part : c.expected) EXPECT_THAT(e.what(), HasSubstr(part));
  }
}

void set_npz(GraphSaintFiles& f, const std::string& member, const std::string& bytes) {
  f.npz[member] = bytes;
}
void set_file(GraphSaintFiles& f, const std::string& name, const std::string& text) {
  f.files[name] = text;
}
std::vector<double> feats_with(int64_t index, double value) {
  std::vector<double> v(12, 1.0);
  v[index] = value;
  return v;
}

const MalformedSaint kCases[] = {
    // Files and the archive.
    {"MissingRoleFile",
     [](GraphSaintFiles& f) { f.files.erase("role.json"); },
     nullptr,
     {"role.json: file not found (the GraphSAINT layout has adj_full.npz, feats.npy"}},
    {"NotAZipArchive",
     nullptr,
     [](const std::string& d) { test::write_file(d + "/adj_full.npz", "indptr,indices\n0,1\n"); },
     {"adj_full.npz: not a zip archive"}},
    {"MissingMember",
     [](GraphSaintFiles& f) { f.npz.erase("indptr.npy"); },
     nullptr,
     {"adj_full.npz: member indptr.npy: missing (a SciPy CSR .npz (scipy.sparse.save_npz) has "
      "indices.npy, indptr.npy, format.npy, shape.npy and data.npy)"}},
    {"CorruptStoredMember",
     [](GraphSaintFiles& f) { f.deflate = false; },
     [](const std::string& d) {
       // Flip a byte inside the stored payload of indices.npy (int32 3, 1, 0, 1, 2).
       std::string bytes = test::read_bytes(d + "/adj_full.npz");
       const std::vector<int32_t> payload = {3, 1, 0, 1, 2};
       const size_t at = bytes.find(
           std::string(reinterpret_cast<const char*>(payload.data()), 5 * sizeof(int32_t)));
       ASSERT_NE(at, std::string::npos);
       bytes[at + 4] ^= 0x40;
       test::write_file(d + "/adj_full.npz", bytes);
     },
     {"adj_full.npz: member indices.npy: cannot read: CRC error"}},
    {"MemberTwice",
     [](GraphSaintFiles& f) {
       // A second indices.npy, added under a name of the same length and renamed in place below
       // (libzip refuses to write a name twice; numpy would read this copy, the last).
       f.deflate = false;
       f.npz["indicez.npy"] = f.npz.at("indices.npy");
     },
     [](const std::string& d) {
       std::string bytes = test::read_bytes(d + "/adj_full.npz");
       for (size_t at = bytes.find("indicez.npy"); at != std::string::npos;
            at = bytes.find("indicez.npy", at))
         bytes[at + 6] = 's';
       test::write_file(d + "/adj_full.npz", bytes);
     },
     {"adj_full.npz: member indices.npy: appears twice in the archive"}},
    {"MemberNotNpy",
     [](GraphSaintFiles& f) { set_npz(f, "shape.npy", "4,4\n"); },
     nullptr,
     {"adj_full.npz: member shape.npy: not a .npy file (bad magic)"}},
    // The CSR members.
    {"NotCsrFormat",
     [](GraphSaintFiles& f) {
       set_npz(f, "format.npy", npy_bytes<char>("|S3", "()", {'c', 'o', 'o'}));
     },
     nullptr,
     {"adj_full.npz: member format.npy: matrix format 'coo' is not supported, expected 'csr'"}},
    {"FormatNotBytes",
     [](GraphSaintFiles& f) { set_npz(f, "format.npy", npy_bytes<int64_t>("<i8", "()", {7})); },
     nullptr,
     {"adj_full.npz: member format.npy: has dtype <i8 and shape (), expected one byte string"}},
    {"ShapeNotSquare",
     [](GraphSaintFiles& f) {
       set_npz(f, "shape.npy", npy_bytes<int64_t>("<i8", "(2,)", {4, 5}));
     },
     nullptr,
     {"adj_full.npz: member shape.npy: matrix shape (4, 5) is not square"}},
    {"IndicesWrongDtype",
     [](GraphSaintFiles& f) {
       set_npz(f, "indices.npy", npy_bytes<float>("<f4", "(5,)", {3, 1, 0, 1, 2}));
     },
     nullptr,
     {"adj_full.npz: member indices.npy: has dtype <f4 and shape (5,), expected int32 or int64"}},
    {"IndptrWrongLength",
     [](GraphSaintFiles& f) {
       set_npz(f, "indptr.npy", npy_bytes<int64_t>("<i8", "(4,)", {0, 2, 3, 5}));
     },
     nullptr,
     {"adj_full.npz: member indptr.npy: has 4 entries, expected N + 1 = 5 (N from shape.npy)"}},
    {"IndptrNotStartingAtZero",
     [](GraphSaintFiles& f) {
       set_npz(f, "indptr.npy", npy_bytes<int64_t>("<i8", "(5,)", {1, 2, 3, 4, 5}));
     },
     nullptr,
     {"adj_full.npz: member indptr.npy index 0: value 1 is not 0"}},
    {"IndptrNotMonotone",
     [](GraphSaintFiles& f) {
       set_npz(f, "indptr.npy", npy_bytes<int64_t>("<i8", "(5,)", {0, 3, 2, 4, 5}));
     },
     nullptr,
     {"adj_full.npz: member indptr.npy index 2: value 2 is below the previous 3"}},
    {"IndptrEndDisagreesWithIndices",
     [](GraphSaintFiles& f) {
       set_npz(f, "indptr.npy", npy_bytes<int64_t>("<i8", "(5,)", {0, 2, 3, 4, 4}));
     },
     nullptr,
     {"adj_full.npz: member indptr.npy index 4: last value 4 differs from the 5 entries of "
      "indices.npy"}},
    {"IndexOutOfRange",
     [](GraphSaintFiles& f) {
       set_npz(f, "indices.npy", npy_bytes<int32_t>("<i4", "(5,)", {3, 1, 0, 7, 2}));
     },
     nullptr,
     {"adj_full.npz: member indices.npy index 3: column 7 is out of range [0, 4)"}},
    {"NegativeIndex",
     [](GraphSaintFiles& f) {
       set_npz(f, "indices.npy", npy_bytes<int32_t>("<i4", "(5,)", {3, -1, 0, 1, 2}));
     },
     nullptr,
     {"adj_full.npz: member indices.npy index 1: column -1 is out of range [0, 4)"}},
    // feats.npy
    {"FeatureRowsDisagree",
     [](GraphSaintFiles& f) {
       set_file(f, "feats.npy", npy_bytes<double>("<f8", "(5, 3)", std::vector<double>(15, 1)));
     },
     nullptr,
     {"feats.npy: has 5 rows, expected N = 4 (the node count of adj_full.npz)"}},
    {"FeaturesWrongDtype",
     [](GraphSaintFiles& f) {
       set_file(f, "feats.npy", npy_bytes<int64_t>("<i8", "(4, 3)", std::vector<int64_t>(12, 1)));
     },
     nullptr,
     {"feats.npy: has dtype <i8 and shape (4, 3), expected float32 or float64 [N, F]"}},
    {"NanFeature",
     [](GraphSaintFiles& f) {
       set_file(f, "feats.npy",
                npy_bytes<double>("<f8", "(4, 3)",
                                  feats_with(5, std::numeric_limits<double>::quiet_NaN())));
     },
     nullptr,
     {"feats.npy: index [1, 2]: value nan is not finite"}},
    {"InfFeature",
     [](GraphSaintFiles& f) {
       set_file(f, "feats.npy",
                npy_bytes<double>("<f8", "(4, 3)",
                                  feats_with(10, -std::numeric_limits<double>::infinity())));
     },
     nullptr,
     {"feats.npy: index [3, 1]: value -inf is not finite"}},
    {"FeatureBeyondFloat32",
     [](GraphSaintFiles& f) {
       set_file(f, "feats.npy", npy_bytes<double>("<f8", "(4, 3)", feats_with(0, 1e39)));
     },
     nullptr,
     {"feats.npy: index [0, 0]: value 1e+39 is out of float32 range"}},
    // class_map.json
    {"ClassMapMissingNode",
     [](GraphSaintFiles& f) { set_file(f, "class_map.json", R"({"0": 0, "1": 1, "3": 1})"); },
     nullptr,
     {"class_map.json: node 2 has no entry (the keys must be the node ids 0..3, N = 4"}},
    {"ClassMapDuplicateKey",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1, "2": 2, "1": 2, "3": 1})");
     },
     nullptr,
     {"class_map.json: key '1': appears twice"}},
    {"ClassMapNonIntegerKey",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1, "two": 2, "3": 1})");
     },
     nullptr,
     {"class_map.json: key 'two': is not a node id"}},
    {"ClassMapLeadingZeroKey",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "01": 1, "2": 2, "3": 1})");
     },
     nullptr,
     {"class_map.json: key '01': is not a node id"}},
    {"ClassMapKeyOutOfRange",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1, "2": 2, "3": 1, "4": 0})");
     },
     nullptr,
     {"class_map.json: key '4': node id 4 is out of range [0, 4) (N from adj_full.npz)"}},
    {"ClassMapMixedLabels",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": [0, 1], "2": 2, "3": 1})");
     },
     nullptr,
     {"class_map.json: key '1': a 0/1 list, but key '0' has a class id (labels must be all class "
      "ids or all 0/1 lists)"}},
    {"ClassMapListThenId",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": [1, 0], "1": [0, 1], "2": 1, "3": [1, 1]})");
     },
     nullptr,
     {"class_map.json: key '2': a class id, but key '0' has a 0/1 list"}},
    {"ClassMapListLengthsDiffer",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json",
                R"({"0": [1, 0, 1], "1": [0, 1, 0], "2": [1, 1], "3": [0, 0, 1]})");
     },
     nullptr,
     {"class_map.json: key '2': the list has 2 entries, but key '0' has 3"}},
    {"ClassMapNegativeLabel",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1, "2": -1, "3": 1})");
     },
     nullptr,
     {"class_map.json: key '2': label -1 is negative (class ids start at 0)"}},
    {"ClassMapLabelAboveNodeCount",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1, "2": 9, "3": 1})");
     },
     nullptr,
     {"class_map.json: key '2': label 9 is not below the node count 4"}},
    {"ClassMapMultiLabelNotBinary",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": [1, 0], "1": [0, 2], "2": [1, 1], "3": [0, 0]})");
     },
     nullptr,
     {"class_map.json: key '1' index 1: multi-label value 2 is not 0 or 1"}},
    {"ClassMapFractionalLabel",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1.5, "2": 2, "3": 1})");
     },
     nullptr,
     {"class_map.json: key '1': number 1.5 is not a class id or a 0/1 list"}},
    {"ClassMapMalformedJson",
     [](GraphSaintFiles& f) {
       set_file(f, "class_map.json", R"({"0": 0, "1": 1, "2" 2, "3": 1})");
     },
     nullptr,
     {"class_map.json: byte 22: malformed JSON: ", "line 1, column 22", "expected ':'"}},
    {"ClassMapNotAnObject",
     [](GraphSaintFiles& f) { set_file(f, "class_map.json", "[0, 1, 2, 1]"); },
     nullptr,
     {"class_map.json: expected a JSON object mapping node ids"}},
    // role.json
    {"RoleIdOutOfRange",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [1, 0], "va": [2], "te": [3, 9]})");
     },
     nullptr,
     {"role.json: te index 1: node id 9 is out of range [0, 4)"}},
    {"RoleIdNegative",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [1, -1], "va": [2], "te": [3]})");
     },
     nullptr,
     {"role.json: tr index 1: node id -1 is out of range [0, 4)"}},
    {"RolesOverlap",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [1, 0], "va": [2, 1], "te": [3]})");
     },
     nullptr,
     {"role.json: va index 1: node id 1 is also in tr (roles must be disjoint)"}},
    {"RoleIdTwice",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [1, 0, 1], "va": [2], "te": [3]})");
     },
     nullptr,
     {"role.json: tr index 2: node id 1 is listed twice"}},
    {"EmptyTrainingRole",
     [](GraphSaintFiles& f) { set_file(f, "role.json", R"({"tr": [], "va": [2], "te": [3]})"); },
     nullptr,
     {"role.json: key 'tr': the training role is empty"}},
    {"RoleMissing",
     [](GraphSaintFiles& f) { set_file(f, "role.json", R"({"tr": [0, 1], "va": [2]})"); },
     nullptr,
     {"role.json: key 'te' is missing"}},
    {"RoleTwice",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [0, 1], "va": [2], "te": [3], "va": [1]})");
     },
     nullptr,
     {"role.json: key 'va': appears twice"}},
    {"RoleUnknownKey",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [0, 1], "va": [2], "te": [3], "train": [0]})");
     },
     nullptr,
     {"role.json: key 'train': is not a role (expected tr, va, te)"}},
    {"RoleNotAnId",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [0, "1"], "va": [2], "te": [3]})");
     },
     nullptr,
     {"role.json: tr index 1: entry \"1\" is not a node id"}},
    {"RoleMalformedJson",
     [](GraphSaintFiles& f) { set_file(f, "role.json", R"({"tr": [0, 1], "va": [2], "te": [3])"); },
     nullptr,
     {"role.json: byte 36: malformed JSON: ", "unexpected end of input"}},
    {"RoleNumberPastADouble",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json", R"({"tr": [0, 1], "va": [2], "te": [3, -1e999]})");
     },
     nullptr,
     {"role.json: malformed JSON: number overflow parsing '-1e999'"}},
    {"RoleNestedPastTheBound",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json",
                "{\"tr\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
     },
     nullptr,
     {"role.json: nested deeper than 8 levels"}},
    {"RoleLongEntryCut",
     [](GraphSaintFiles& f) {
       set_file(f, "role.json",
                "{\"tr\": [0, \"" + std::string(1000, 'x') + "\"], \"va\": [2], \"te\": [3]}");
     },
     nullptr,
     {"role.json: tr index 1: entry \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... "
      "is "
      "not a node id"}},
};

// The slice reader at 2 and 3 ranks: the lowest failing rank (the one the CLI reports) gives the
// whole loader's error; ranks whose rows are sound may load (a bad feature row is its holder's).
TEST_P(MalformedGraphSaint, SlicesGiveTheLoadersError) {
  const MalformedSaint& c = GetParam();
  TempDir tmp;
  const std::string dir = write_case(c, tmp);
  for (int world = 2; world <= 3; ++world) {
    std::string first;
    for (int rank = 0; rank < world && first.empty(); ++rank) {
      try {
        load_graphsaint_slice(dir, rank, world);
      } catch (const InputError& e) {
        first = e.what();
      }
    }
    ASSERT_FALSE(first.empty()) << "no rank failed at " << world << " ranks";
    for (const std::string& part : c.expected) EXPECT_THAT(first, HasSubstr(part)) << world;
  }
}

INSTANTIATE_TEST_SUITE_P(GraphSaint, MalformedGraphSaint, testing::ValuesIn(kCases),
                         saint_case_name);

// Random byte damage to any file or archive never crashes the loader: each trial either throws an
// InputError naming the damaged file or loads a graph that validates. Fixed seed.
TEST(MalformedGraphSaintFuzz, RandomByteFlipsGiveInputErrorOrValidGraph) {
  std::mt19937 rng(23);
  const std::vector<std::string> names = {"adj_full.npz", "feats.npy", "class_map.json",
                                          "role.json"};
  int errors = 0;
  for (int trial = 0; trial < 200; ++trial) {
    TempDir tmp;
    GraphSaintFiles files = test::tiny_graphsaint_files();
    files.deflate = trial % 2 == 0;
    test::write_graphsaint(tmp.str(), files);
    const std::string path = tmp.str(names[rng() % names.size()]);
    std::string bytes = test::read_bytes(path);
    for (int flip = 0; flip < 1 + static_cast<int>(rng() % 4); ++flip)
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    test::write_file(path, bytes);
    try {
      load_graphsaint(tmp.str()).validate("fuzz");
    } catch (const InputError& e) {
      ++errors;
      EXPECT_THAT(e.what(), HasSubstr(std::filesystem::path(path).filename().string()))
          << "trial " << trial;
    }
  }
  EXPECT_GT(errors, 100);
}

}  // namespace
}  // namespace adaqp
