// Every malformed input gives one InputError that names the file, the line or index, and the
// offending value; none crashes the loader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "adaqp/comm/thread_communicator.h"
#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/slice_loader.h"
#include "dataset_files.h"
#include "ogb_binary_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

using test::FileMap;
using test::npy_bytes;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The OGB binary layout's archives deflated (as DatasetSaver writes them) or stored.
enum class Layout { kOgbCsv, kOgbBinary, kOgbBinaryStored, kNumpy };

struct MalformedCase {
  std::string name;
  Layout layout;
  std::function<void(FileMap&)> edit;  // on the uncompressed CSV text or the .npy bytes
  std::function<void(const std::string& dir)> damage;  // on the written files, if set
  std::vector<std::string> expected;                   // substrings of the message
};

// Names the case in gtest output instead of dumping its bytes.
void PrintTo(const MalformedCase& c, std::ostream* os) {
  *os << c.name;
}

std::string malformed_case_name(const testing::TestParamInfo<MalformedCase>& info) {
  return info.param.name;
}

void set(FileMap& files, const std::string& name, const std::string& content) {
  files[name] = content;
}

// Overwrites the file at `path` with `keep` bytes of itself (truncation) or flips bytes.
void truncate_file(const std::string& path, size_t keep) {
  test::write_file(path, test::read_bytes(path).substr(0, keep));
}
void flip_bytes(const std::string& path, size_t from, size_t count) {
  std::string bytes = test::read_bytes(path);
  for (size_t i = from; i < from + count && i < bytes.size(); ++i) bytes[i] = ~bytes[i];
  test::write_file(path, bytes);
}

// In a stored data.npz of many_binary_edges: toggles the lowest bit of edge_index's id
// [row, 5], which stays a node id (0-3), so that only the archive's CRC-32 can tell.
void toggle_stored_edge_id(const std::string& dir, int row) {
  const std::string path = dir + "/raw/data.npz";
  std::string bytes = test::read_bytes(path);
  const size_t npy = bytes.find("\x93NUMPY");  // edge_index.npy, the archive's first member
  ASSERT_NE(npy, std::string::npos);
  bytes.at(npy + 128 + static_cast<size_t>(row) * 20000 * 8 + 5 * 8) ^= 1;
  test::write_file(path, bytes);
}

// A long edge list so that damage inside the compressed stream hits real data.
std::string many_edges() {
  std::string text;
  for (int i = 0; i < 20000; ++i)
    text += std::to_string(i % 4) + "," + std::to_string(i * 7 % 4) + "\n";
  return text;
}

// The tiny dataset's edges replaced by many_edges(), counted in num-edge-list.
void with_many_edges(FileMap& files) {
  set(files, "raw/edge.csv.gz", many_edges());
  set(files, "raw/num-edge-list.csv.gz", "20000\n");
}

// The tiny dataset of the case's layout with the case's edit and damage, in `dir`.
void write_case(const MalformedCase& c, const std::string& dir) {
  FileMap files = c.layout == Layout::kOgbCsv  ? test::tiny_ogb_text()
                  : c.layout == Layout::kNumpy ? test::tiny_numpy_files()
                                               : test::tiny_ogb_binary_files();
  c.edit(files);
  if (c.layout == Layout::kOgbCsv)
    test::write_ogb(dir, files);
  else if (c.layout == Layout::kNumpy)
    test::write_files(dir, files);
  else
    test::write_ogb_binary(dir, files, c.layout == Layout::kOgbBinary);
  if (c.damage) c.damage(dir);
}

class MalformedInput : public testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedInput, ThrowsOneClearInputError) {
  const MalformedCase& c = GetParam();
  test::TempDir tmp;
  const std::string dir = tmp.str("data");
  write_case(c, dir);
  try {
    if (c.layout == Layout::kNumpy)
      load_numpy(dir);
    else
      load_ogb(dir, "");
    FAIL() << "no error thrown";
  } catch (const InputError& e) {
    for (const std::string& part : c.expected) EXPECT_THAT(e.what(), HasSubstr(part));
  }
}

const auto no_edit = [](FileMap&) {};

const MalformedCase kOgbCases[] = {
    {"OgbMissingFeatureFile",
     Layout::kOgbCsv,
     [](FileMap& f) { f.erase("raw/node-feat.csv.gz"); },
     nullptr,
     {"raw/node-feat.csv.gz: file not found"}},
    {"OgbTruncatedGzip",
     Layout::kOgbCsv,
     [](FileMap& f) { with_many_edges(f); },
     [](const std::string& d) { truncate_file(d + "/raw/edge.csv.gz", 200); },
     {"raw/edge.csv.gz: after line ", "truncated gzip data"}},
    {"OgbCorruptGzip",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/edge.csv.gz", many_edges()); },
     [](const std::string& d) { flip_bytes(d + "/raw/edge.csv.gz", 40, 8); },
     {"raw/edge.csv.gz: after line 0: corrupt gzip data"}},
    {"OgbNotGzip",
     Layout::kOgbCsv,
     no_edit,
     [](const std::string& d) { test::write_file(d + "/raw/node-label.csv.gz", "0\n1\n2\n1\n"); },
     {"raw/node-label.csv.gz: not a gzip file"}},
    {"OgbRaggedFeatureRow",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-feat.csv.gz", "1,0,2\n0.5,-1.25\n3,3,3\n0,0,0\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 2: has 2 columns, expected 3"}},
    {"OgbLongFeatureRow",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-feat.csv.gz", "1,0,2\n0.5,-1.25,0\n3,3,3,4,5\n0,0,0\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 3: has 5 columns, expected 3"}},
    {"OgbNonNumericFeature",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-feat.csv.gz", "1,0,2\n0.5,-1.25,0\n3,abc,3\n0,0,0\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 3: column 2: 'abc' is not a number"}},
    {"OgbNanFeature",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-feat.csv.gz", "1,0,2\n0.5,nan,0\n3,3,3\n0,0,0\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 2: column 2: 'nan' is not finite"}},
    {"OgbInfFeature",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-feat.csv.gz", "1,0,2\n0.5,-1.25,0\n3,3,3\n0,-inf,0\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 4: column 2: '-inf' is not finite"}},
    {"OgbFeatureOverflowsFloat",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-feat.csv.gz", "1,0,2e39\n0.5,-1.25,0\n3,3,3\n0,0,0\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 1: column 3: '2e39' is out of float32 range"}},
    {"OgbNonNumericEdge",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/edge.csv.gz", "0,1\nx1,2\n2,3\n3,0\n1,0\n"); },
     nullptr,
     {"raw/edge.csv.gz: line 2: source node id 'x1' is not an integer"}},
    {"OgbEdgeIdBeyondInt64",
     Layout::kOgbCsv,
     [](FileMap& f) {
       set(f, "raw/edge.csv.gz", "0,1\n1,2\n2,100000000000000000000000\n3,0\n1,0\n");
     },
     nullptr,
     {"raw/edge.csv.gz: line 3: target node id '100000000000000000000000' is beyond the 64-bit "
      "integers"}},
    {"OgbEdgeWithOneColumn",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/edge.csv.gz", "0,1\n1,2\n2,3\n\n1,0\n"); },
     nullptr,
     {"raw/edge.csv.gz: line 4: has 1 column, expected 2"}},
    {"OgbEdgeIdOutOfRange",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,9\n1,0\n"); },
     nullptr,
     {"raw/edge.csv.gz: line 4: target node id 9 is out of range [0, 4)"}},
    {"OgbNegativeEdgeId",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/edge.csv.gz", "0,1\n1,2\n-2,3\n3,0\n1,0\n"); },
     nullptr,
     {"raw/edge.csv.gz: line 3: source node id -2 is out of range"}},
    {"OgbNodeCountAboveFeatureRows",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/num-node-list.csv.gz", "5\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 4: file ends after 4 lines, but num-node-list.csv.gz says 5"}},
    {"OgbNodeCountBelowFeatureRows",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/num-node-list.csv.gz", "3\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 4: more lines than the 3 num-node-list.csv.gz says"}},
    {"OgbEdgeCountDisagrees",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/num-edge-list.csv.gz", "4\n"); },
     nullptr,
     {"raw/edge.csv.gz: line 5: more lines than the 4 num-edge-list.csv.gz says"}},
    {"OgbNonNumericNodeCount",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/num-node-list.csv.gz", "four\n"); },
     nullptr,
     {"raw/num-node-list.csv.gz: line 1: count 'four' is not an integer"}},
    {"OgbHugeNodeCount",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/num-node-list.csv.gz", "4000000000000000000\n"); },
     nullptr,
     {"raw/node-feat.csv.gz: line 4: file ends after 4 lines, but num-node-list.csv.gz says "
      "4000000000000000000"}},
    {"OgbLongFieldShownByItsStart",
     Layout::kOgbCsv,
     [](FileMap& f) {
       set(f, "raw/node-label.csv.gz", "0\n" + std::string(100000, '7') + "x\n2\n1\n");
     },
     nullptr,
     {"raw/node-label.csv.gz: line 2: label '" + std::string(64, '7') +
      "...' (100001 bytes) is not an integer"}},
    {"OgbNegativeLabel",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-label.csv.gz", "0\n-1\n2\n1\n"); },
     nullptr,
     {"raw/node-label.csv.gz: line 2: label -1 is negative (class ids start at 0)"}},
    {"OgbLabelOutOfRange",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-label.csv.gz", "0\n1\n2\n17\n"); },
     nullptr,
     {"raw/node-label.csv.gz: line 4: label 17 is not below the node count 4"}},
    {"OgbFractionalLabel",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-label.csv.gz", "0\n1.5\n2\n1\n"); },
     nullptr,
     {"raw/node-label.csv.gz: line 2: label '1.5' is not an integer"}},
    {"OgbMultiLabelValueNotBinary",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-label.csv.gz", "0,1\n1,1\n0,2\n1,0\n"); },
     nullptr,
     {"raw/node-label.csv.gz: line 3: column 2: multi-label value 2 is not 0 or 1"}},
    {"OgbMultiLabelValueNotAnInteger",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-label.csv.gz", "0,1\n1,1\n0,nan\n1,0\n"); },
     nullptr,
     {"raw/node-label.csv.gz: line 3: column 2: multi-label value 'nan' is not an integer"}},
    {"OgbMultiLabelRaggedRow",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "raw/node-label.csv.gz", "0,1\n1,1\n0\n1,0\n"); },
     nullptr,
     {"raw/node-label.csv.gz: line 3: has 1 column, expected 2"}},
    {"OgbOverlappingSplits",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "split/main/valid.csv.gz", "2\n1\n"); },
     nullptr,
     {"split/main/valid.csv.gz: line 2: node id 1 is also in train.csv.gz"}},
    {"OgbDuplicateSplitId",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "split/main/train.csv.gz", "0\n1\n0\n"); },
     nullptr,
     {"split/main/train.csv.gz: line 3: node id 0 is listed twice"}},
    {"OgbSplitIdOutOfRange",
     Layout::kOgbCsv,
     [](FileMap& f) { set(f, "split/main/test.csv.gz", "3\n4\n"); },
     nullptr,
     {"split/main/test.csv.gz: line 2: node id 4 is out of range [0, 4)"}},
    {"OgbMissingSplitFile",
     Layout::kOgbCsv,
     [](FileMap& f) { f.erase("split/main/test.csv.gz"); },
     nullptr,
     {"split/main/test.csv.gz: file not found"}},
    {"OgbCsvSplitFileIsADirectory",
     Layout::kOgbCsv,
     [](FileMap& f) { f.erase("split/main/test.csv.gz"); },
     [](const std::string& dir) {
       std::filesystem::create_directory(dir + "/split/main/test.csv.gz");
     },
     {"split/main/test.csv.gz: is not a regular file"}},
};

const std::vector<int64_t> kEdges = {0, 1, 2, 3, 1, 1, 2, 3, 0, 0};

const MalformedCase kNumpyCases[] = {
    {"NumpyMissingLabelFile",
     Layout::kNumpy,
     [](FileMap& f) { f.erase("label.npy"); },
     nullptr,
     {"label.npy: file not found"}},
    {"NumpyLabelFileIsADirectory",
     Layout::kNumpy,
     [](FileMap& f) { f.erase("label.npy"); },
     [](const std::string& dir) { std::filesystem::create_directory(dir + "/label.npy"); },
     {"label.npy: is not a regular file"}},
    {"NumpyBadMagic",
     Layout::kNumpy,
     [](FileMap& f) { set(f, "feat.npy", "PK\x03\x04 not numpy"); },
     nullptr,
     {"feat.npy: not a .npy file (bad magic)"}},
    {"NumpyBadHeader",
     Layout::kNumpy,
     [](FileMap& f) { f["label.npy"].replace(10, 9, "{'descr' <"); },
     nullptr,
     {"label.npy: header: expected ':' at offset 9"}},
    {"NumpyUnsupportedVersion",
     Layout::kNumpy,
     [](FileMap& f) { f["feat.npy"][6] = 7; },
     nullptr,
     {"feat.npy: header: unsupported .npy format version 7.0"}},
    {"NumpyEdgeIndexWrongDtype",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "edge_index.npy", npy_bytes<float>("<f4", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0}));
     },
     nullptr,
     {"edge_index.npy: has dtype <f4 and shape (2, 5), expected int32 or int64 [2, E]"}},
    {"NumpyEdgeIndexWrongShape",
     Layout::kNumpy,
     [](FileMap& f) { set(f, "edge_index.npy", npy_bytes<int64_t>("<i8", "(5, 2)", kEdges)); },
     nullptr,
     {"edge_index.npy: has dtype <i8 and shape (5, 2), expected"}},
    {"NumpyBigEndianDtype",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "edge_index.npy", npy_bytes<int64_t>("<i8", "(2, 5)", kEdges));
       f["edge_index.npy"][21] = '>';
     },
     nullptr,
     {"edge_index.npy: header: unsupported dtype '>i8'"}},
    {"NumpyFeatFloat64",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "feat.npy", npy_bytes<double>("<f8", "(4, 3)", std::vector<double>(12, 0.5)));
     },
     nullptr,
     {"feat.npy: has dtype <f8 and shape (4, 3), expected float32 (<f4) [N, F] (convert with "
      ".astype(numpy.float32))"}},
    {"NumpyFeatOneDimensional",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "feat.npy", npy_bytes<float>("<f4", "(12,)", std::vector<float>(12, 0.5F)));
     },
     nullptr,
     {"feat.npy: has dtype <f4 and shape (12,), expected float32 (<f4) [N, F] (one row per node: "
      ".reshape(N, F))"}},
    {"NumpyFortranOrder",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "feat.npy", npy_bytes<float>("<f4", "(4, 3)", std::vector<float>(12, 1), true));
     },
     nullptr,
     {"feat.npy: header: Fortran-order arrays are not supported"}},
    {"NumpyTruncatedPayload",
     Layout::kNumpy,
     [](FileMap& f) { f["feat.npy"].resize(f["feat.npy"].size() - 5); },
     nullptr,
     {"feat.npy: payload: truncated: 43 bytes, shape (4, 3) of <f4 needs 48"}},
    {"NumpyTrailingBytes",
     Layout::kNumpy,
     [](FileMap& f) { f["label.npy"] += "xyz"; },
     nullptr,
     {"label.npy: payload: 3 unexpected bytes after the data of shape (4,)"}},
    {"NumpyEdgeIdOutOfRange",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "edge_index.npy",
           npy_bytes<int32_t>("<i4", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 7, 0, 0}));
     },
     nullptr,
     {"edge_index.npy: index [1, 2]: node id 7 is out of range [0, 4)"}},
    {"NumpyNanFeature",
     Layout::kNumpy,
     [](FileMap& f) {
       std::vector<float> v(12, 1.0f);
       v[5] = std::numeric_limits<float>::quiet_NaN();
       set(f, "feat.npy", npy_bytes<float>("<f4", "(4, 3)", v));
     },
     nullptr,
     {"feat.npy: index [1, 2]: value nan is not finite"}},
    {"NumpyNegativeLabel",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "label.npy", npy_bytes<int64_t>("<i8", "(4,)", {0, 1, -3, 1}));
     },
     nullptr,
     {"label.npy: index 2: label -3 is negative"}},
    {"NumpyLabelAboveNodeCount",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "label.npy", npy_bytes<int64_t>("<i8", "(4,)", {0, 1, 4, 1}));
     },
     nullptr,
     {"label.npy: index 2: label 4 is not below the node count 4 (the class count, largest id + "
      "1, cannot exceed it)"}},
    {"NumpyLabelRowsDisagree",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "label.npy", npy_bytes<int64_t>("<i8", "(5,)", {0, 1, 2, 1, 0}));
     },
     nullptr,
     {"label.npy: has dtype <i8 and shape (5,), expected int32/int64 [4] class ids"}},
    {"NumpyMultiLabelNotBinary",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "label.npy", npy_bytes<float>("<f4", "(4, 2)", {1, 0, 0.5f, 1, 0, 0, 1, 1}));
     },
     nullptr,
     {"label.npy: index [1, 0]: multi-label value 0.5 is not 0 or 1"}},
    {"NumpyOverlappingSplits",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "test.npy", npy_bytes<int64_t>("<i8", "(2,)", {3, 1}));
     },
     nullptr,
     {"test.npy: index 1: node id 1 is also in train.npy"}},
    {"NumpyMaskWrongLength",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "valid.npy", npy_bytes<uint8_t>("|b1", "(3,)", {0, 0, 1}));
     },
     nullptr,
     {"valid.npy: has dtype |b1 and shape (3,), expected int32/int64 node ids [K] or a bool mask "
      "[4]"}},
    {"NumpySplitIdOutOfRange",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "train.npy", npy_bytes<int32_t>("<i4", "(2,)", {0, 12}));
     },
     nullptr,
     {"train.npy: index 1: node id 12 is out of range [0, 4)"}},
    {"NumpyHugeShape",
     Layout::kNumpy,
     [](FileMap& f) {
       set(f, "label.npy", npy_bytes<int64_t>("<i8", "(4611686018427387904, 4)", {}));
     },
     nullptr,
     {"label.npy: header: shape (4611686018427387904, 4) is too large"}},
    // Rows of no columns: no payload bounds N, which sized the graph's arrays (an internal error).
    {"NumpyHugeShapeOfNoColumns",
     Layout::kNumpy,
     [](FileMap& f) { set(f, "feat.npy", npy_bytes<float>("<f4", "(3000000000, 0)", {})); },
     nullptr,
     {"feat.npy: header: shape (3000000000, 0): 3000000000 nodes, at least 2^31"}},
};

const double kNan = std::numeric_limits<double>::quiet_NaN();
const std::string kDataNpz = "raw/data.npz/";
const std::string kLabelMember = "raw/node-label.npz/node_label.npy";

// 20000 edges among the 4 nodes, so that damage inside the deflated member hits its data.
void many_binary_edges(FileMap& f) {
  std::vector<int64_t> edge_index(40000);
  for (int i = 0; i < 20000; ++i) {
    edge_index[i] = i % 4;
    edge_index[20000 + i] = i * 7 % 4;
  }
  set(f, kDataNpz + "edge_index.npy", npy_bytes<int64_t>("<i8", "(2, 20000)", edge_index));
  set(f, kDataNpz + "num_edges_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {20000}));
}

const MalformedCase kOgbBinaryCases[] = {
    {"BinMissingDataNpz",
     Layout::kOgbBinary,
     [](FileMap& f) {
       for (const char* m : {"edge_index", "node_feat", "num_nodes_list", "num_edges_list"})
         f.erase(kDataNpz + m + ".npy");
     },
     nullptr,
     {": neither raw/edge.csv.gz nor raw/data.npz found: the OGB CSV layout has"}},
    {"BinMissingLabelFile",
     Layout::kOgbBinary,
     [](FileMap& f) { f.erase(kLabelMember); },
     nullptr,
     {"raw/node-label.npz: file not found (the OGB binary layout has raw/data.npz and "
      "raw/node-label.npz)"}},
    {"BinMissingFeatureMember",
     Layout::kOgbBinary,
     [](FileMap& f) { f.erase(kDataNpz + "node_feat.npy"); },
     nullptr,
     {"raw/data.npz: member node_feat.npy: missing (the OGB binary layout's raw/data.npz "
      "(ogb.io.DatasetSaver) has edge_index.npy, node_feat.npy"}},
    {"BinMissingLabelMember",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, "raw/node-label.npz/labels.npy", f[kLabelMember]);
       f.erase(kLabelMember);
     },
     nullptr,
     {"raw/node-label.npz: member node_label.npy: missing (the OGB binary layout's "
      "raw/node-label.npz (ogb.io.DatasetSaver) has node_label.npy)"}},
    {"BinEdgeIndexWrongDtype",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "edge_index.npy",
           npy_bytes<float>("<f4", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0}));
     },
     nullptr,
     {"raw/data.npz: member edge_index.npy: has dtype <f4 and shape (2, 5), expected int64 [2, "
      "E]"}},
    {"BinEdgeIndexWrongShape",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "edge_index.npy",
           npy_bytes<int64_t>("<i8", "(5, 2)", {0, 1, 1, 2, 2, 3, 3, 0, 1, 0}));
     },
     nullptr,
     {"member edge_index.npy: has dtype <i8 and shape (5, 2), expected int64 [2, E]"}},
    {"BinFeatureWrongDtype",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "node_feat.npy",
           npy_bytes<uint8_t>("|b1", "(4, 3)", {1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0}));
     },
     nullptr,
     {"member node_feat.npy: has dtype |b1 and shape (4, 3), expected float16/32/64 or int32/64 "
      "[N, F]"}},
    {"BinNodeCountDisagrees",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "num_nodes_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {5}));
     },
     nullptr,
     {"raw/data.npz: member node_feat.npy: has 4 rows, expected N = 5 (num_nodes_list.npy)"}},
    {"BinEdgeCountDisagrees",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "num_edges_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {6}));
     },
     nullptr,
     {"member edge_index.npy: has 5 columns, expected E = 6 (num_edges_list.npy)"}},
    {"BinSeveralGraphs",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "num_nodes_list.npy", npy_bytes<int64_t>("<i8", "(2,)", {2, 2}));
     },
     nullptr,
     {"member num_nodes_list.npy: has 2 entries, expected 1 (only single-graph datasets are "
      "supported)"}},
    {"BinNegativeCount",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "num_edges_list.npy", npy_bytes<int64_t>("<i8", "(1,)", {-1}));
     },
     nullptr,
     {"member num_edges_list.npy index 0: count -1 is negative"}},
    {"BinEdgeIdOutOfRange",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "edge_index.npy",
           npy_bytes<int64_t>("<i8", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 9, 0}));
     },
     nullptr,
     {"raw/data.npz: member edge_index.npy index [1, 3]: node id 9 is out of range [0, 4) (N from "
      "num_nodes_list.npy)"}},
    {"BinNegativeSourceId",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "edge_index.npy",
           npy_bytes<int64_t>("<i8", "(2, 5)", {0, 1, -2, 3, 1, 1, 2, 3, 0, 0}));
     },
     nullptr,
     {"member edge_index.npy index [0, 2]: node id -2 is out of range [0, 4)"}},
    {"BinNanFeatureStored",
     Layout::kOgbBinaryStored,
     [](FileMap& f) {
       set(f, kDataNpz + "node_feat.npy",
           npy_bytes<double>("<f8", "(4, 3)", {1, 0, 2, 0.5, -1.25, 0, 3, 3, 3, 0, kNan, 0}));
     },
     nullptr,
     {"raw/data.npz: member node_feat.npy index [3, 1]: value nan is not finite"}},
    {"BinFloat16InfFeature",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "node_feat.npy",
           npy_bytes<uint16_t>("<f2", "(4, 3)", {0, 0, 0, 0, 0, 0xfc00, 0, 0, 0, 0, 0, 0}));
     },
     nullptr,
     {"member node_feat.npy index [1, 2]: value -inf is not finite"}},
    {"BinFeatureOverflowsFloat32",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "node_feat.npy",
           npy_bytes<double>("<f8", "(4, 3)", {1, 0, 2, 0.5, -1.25, 0, 1e39, 3, 3, 0, 0, 0}));
     },
     nullptr,
     {"member node_feat.npy index [2, 0]: value 1e+39 is out of float32 range"}},
    {"BinFortranOrderFeatures",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kDataNpz + "node_feat.npy",
           npy_bytes<float>("<f4", "(4, 3)", std::vector<float>(12), true));
     },
     nullptr,
     {"raw/data.npz: member node_feat.npy: header: Fortran-order arrays are not supported"}},
    {"BinNanLabelInTrain",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<double>("<f8", "(4, 1)", {0, kNan, 2, 1}));
     },
     nullptr,
     {"split/main/train.csv.gz: line 2: node id 1 is unlabelled (its label in raw/node-label.npz "
      "is NaN); a split may name labelled nodes only"}},
    {"BinNanLabelInTest",
     Layout::kOgbBinaryStored,
     [](FileMap& f) {
       set(f, kLabelMember,
           npy_bytes<float>("<f4", "(4,)", {0, 1, 2, std::numeric_limits<float>::quiet_NaN()}));
     },
     nullptr,
     {"split/main/test.csv.gz: line 1: node id 3 is unlabelled"}},
    {"BinEveryLabelNan",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<double>("<f8", "(4, 1)", {kNan, kNan, kNan, kNan}));
     },
     nullptr,
     {"raw/node-label.npz: member node_label.npy: every label is NaN (no labelled node)"}},
    {"BinFractionalLabel",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<double>("<f8", "(4, 1)", {0, 1.5, 2, 1}));
     },
     nullptr,
     {"member node_label.npy index [1, 0]: label 1.5 is not a class id (an integer; NaN marks an "
      "unlabelled node)"}},
    {"BinNegativeLabel",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<int64_t>("<i8", "(4, 1)", {0, 1, -3, 1}));
     },
     nullptr,
     {"member node_label.npy index [2, 0]: label -3 is negative"}},
    {"BinLabelRowsDisagree",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<int64_t>("<i8", "(3, 1)", {0, 1, 2}));
     },
     nullptr,
     {"raw/node-label.npz: member node_label.npy: has 3 rows, expected N = 4"}},
    {"BinLabelWrongShape",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<int64_t>("<i8", "(4, 2, 1)", {0, 1, 2, 1, 0, 1, 2, 1}));
     },
     nullptr,
     {"member node_label.npy: has dtype <i8 and shape (4, 2, 1), expected int or float [N] or "
      "[N, 1] class ids"}},
    {"BinMultiLabelNotBinary",
     Layout::kOgbBinary,
     [](FileMap& f) {
       set(f, kLabelMember, npy_bytes<float>("<f4", "(4, 2)", {1, 0, 0, 1, 1, 2, 0, 0}));
     },
     nullptr,
     {"member node_label.npy index [2, 1]: multi-label value 2 is not 0 or 1"}},
    {"BinNotAZipArchive",
     Layout::kOgbBinary,
     no_edit,
     [](const std::string& d) { test::write_file(d + "/raw/data.npz", "edge_index,0,1\n"); },
     {"raw/data.npz: not a zip archive"}},
    {"BinTruncatedArchive",
     Layout::kOgbBinary,
     many_binary_edges,
     [](const std::string& d) { truncate_file(d + "/raw/data.npz", 300); },
     {"raw/data.npz: not a zip archive"}},
    {"BinCorruptDeflatedMember",
     Layout::kOgbBinary,
     many_binary_edges,
     [](const std::string& d) { flip_bytes(d + "/raw/data.npz", 200, 8); },
     {"raw/data.npz: member edge_index.npy: cannot read: CRC error"}},
    // A stored member's two rows are read by two copies, the second after a seek: libzip checks
    // the CRC-32 of neither (an id changed within range was a wrong edge, accepted).
    {"BinCorruptStoredSources",
     Layout::kOgbBinaryStored,
     many_binary_edges,
     [](const std::string& d) { toggle_stored_edge_id(d, 0); },
     {"raw/data.npz: member edge_index.npy: CRC error"}},
    {"BinCorruptStoredTargets",
     Layout::kOgbBinaryStored,
     many_binary_edges,
     [](const std::string& d) { toggle_stored_edge_id(d, 1); },
     {"raw/data.npz: member edge_index.npy: CRC error"}},
    {"BinSplitDictOnly",
     Layout::kOgbBinary,
     [](FileMap& f) {
       for (const char* name : {"train", "valid", "test"})
         f.erase(std::string("split/main/") + name + ".csv.gz");
       set(f, "split/main/split_dict.pt", "PK\x03\x04");
     },
     nullptr,
     {"split/main/split_dict.pt: is a torch pickle (ogb.io.DatasetSaver.save_split), which adaqp "
      "does not read: write the split beside it as train.csv.gz, valid.csv.gz and test.csv.gz"}},
};

// A gzip stream cut short: every line zlib can still decompress is read (and checked) first, so
// the error names the last whole line before the cut, counted here from zlib's own output. The
// edges do not repeat, so that what survives a cut spans several of the reader's reads, and zlib
// decompresses ahead of them (into its own buffer): cuts at several places.
TEST(MalformedInput, TruncatedGzipNamesTheLastWholeLine) {
  test::TempDir tmp;
  const std::string dir = tmp.str("data");
  FileMap files = test::tiny_ogb_text();
  constexpr int kEdges = 800000;
  std::string edges_text;
  uint32_t state = 12345;
  for (int i = 0; i < kEdges; ++i) {
    state = state * 1664525u + 1013904223u;
    edges_text += std::to_string(state >> 30) + "," + std::to_string((state >> 28) & 3) + "\n";
  }
  set(files, "raw/edge.csv.gz", edges_text);
  set(files, "raw/num-edge-list.csv.gz", std::to_string(kEdges) + "\n");
  test::write_ogb(dir, files);
  const std::string edges = dir + "/raw/edge.csv.gz";
  const std::string whole_file = test::read_bytes(edges);
  for (const double cut : {0.35, 0.5, 0.65, 0.8}) {
    test::write_file(edges, whole_file.substr(0, static_cast<size_t>(cut * whole_file.size())));
    // One read into room for all of it: zlib decompresses straight into it, up to the cut.
    std::string text(edges_text.size(), '\0');
    gzFile in = gzopen(edges.c_str(), "rb");
    ASSERT_NE(in, nullptr);
    const int n = gzread(in, text.data(), static_cast<unsigned>(text.size()));
    gzclose(in);
    text.resize(static_cast<size_t>(std::max(n, 0)));
    // More than the reader's first buffer (64 KiB) and zlib's (512 KiB, gzbuffer) hold.
    ASSERT_GT(text.size(), size_t{1} << 20) << cut;
    const auto whole = std::count(text.begin(), text.end(), '\n');
    ASSERT_LT(whole, kEdges);
    try {
      load_ogb(dir, "");
      ADD_FAILURE() << "a truncated edge file accepted, cut at " << cut;
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("raw/edge.csv.gz: after line " + std::to_string(whole) +
                                      ": truncated gzip data"))
          << cut;
    }
  }
}

// Random edits never crash a loader: each either throws InputError or yields a graph that
// validates. Fixed seeds, so every run tries the same inputs.
TEST(MalformedInputFuzz, RandomCsvEditsGiveInputErrorOrValidGraph) {
  const std::string alphabet = "0123456789,-.eEnaif \n\r";
  std::mt19937 rng(7);
  int errors = 0;
  for (int trial = 0; trial < 200; ++trial) {
    FileMap files = test::tiny_ogb_text();
    auto it = files.begin();
    std::advance(it, rng() % files.size());
    std::string& text = it->second;
    for (int edit = 0; edit < 1 + static_cast<int>(rng() % 3); ++edit) {
      const size_t pos = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(pos, 1, c);
          break;
        case 1:
          if (pos < text.size()) text.erase(pos, 1);
          break;
        default:
          if (pos < text.size()) text[pos] = c;
      }
    }
    test::TempDir tmp;
    test::write_ogb(tmp.str(), files);
    try {
      load_ogb(tmp.str(), "").validate("fuzz");
    } catch (const InputError& e) {
      ++errors;
      EXPECT_THAT(e.what(), HasSubstr(std::filesystem::path(it->first).filename().string()))
          << "trial " << trial;
    }
  }
  EXPECT_GT(errors, 60);  // most edits break the files
}

TEST(MalformedInputFuzz, RandomByteFlipsGiveInputErrorOrValidGraph) {
  std::mt19937 rng(11);
  int errors = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const bool ogb = trial % 2 == 0;
    test::TempDir tmp;
    if (ogb)
      test::write_ogb(tmp.str(), test::tiny_ogb_text());
    else
      test::write_files(tmp.str(), test::tiny_numpy_files());
    std::vector<std::string> paths;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(tmp.path()))
      if (entry.is_regular_file()) paths.push_back(entry.path().string());
    std::sort(paths.begin(), paths.end());
    const std::string path = paths[rng() % paths.size()];
    std::string bytes = test::read_bytes(path);
    for (int flip = 0; flip < 1 + static_cast<int>(rng() % 4); ++flip)
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    test::write_file(path, bytes);
    try {
      (ogb ? load_ogb(tmp.str(), "") : load_numpy(tmp.str())).validate("fuzz");
    } catch (const InputError& e) {
      ++errors;
      EXPECT_THAT(e.what(), HasSubstr(std::filesystem::path(path).filename().string()))
          << "trial " << trial;
    }
  }
  EXPECT_GT(errors, 60);
}

INSTANTIATE_TEST_SUITE_P(Ogb, MalformedInput, testing::ValuesIn(kOgbCases), malformed_case_name);
INSTANTIATE_TEST_SUITE_P(Numpy, MalformedInput, testing::ValuesIn(kNumpyCases),
                         malformed_case_name);
INSTANTIATE_TEST_SUITE_P(OgbBinary, MalformedInput, testing::ValuesIn(kOgbBinaryCases),
                         malformed_case_name);

// The slice readers of the distributed start-up (graph/slice_loader.h) give the loaders' errors at
// 1 to 3 ranks (as threads): that of the lowest failing rank, the one the CLI reports.
class MalformedSlices : public testing::TestWithParam<MalformedCase> {};

struct StepFailed {};

TEST_P(MalformedSlices, GiveTheLoadersError) {
  const MalformedCase& c = GetParam();
  test::TempDir tmp;
  const std::string dir = tmp.str("data");
  write_case(c, dir);
  DatasetSpec spec;
  spec.format = c.layout == Layout::kNumpy ? DatasetFormat::kNumpy : DatasetFormat::kOgb;
  spec.path = dir;
  for (int world = 1; world <= 3; ++world) {
    std::vector<std::string> errors(static_cast<size_t>(world));
    run_thread_ranks(world, [&](Communicator& comm) {
      const CollectiveStep step = [&](const std::function<void()>& f) {
        bool failed = false;
        try {
          f();
        } catch (const InputError& e) {
          errors[comm.rank()] = e.what();
          failed = true;
        } catch (const std::exception& e) {
          errors[comm.rank()] = std::string("not an InputError: ") + e.what();
          failed = true;
        }
        if (any_rank_failed(comm, failed)) throw StepFailed{};
      };
      try {
        load_slice(spec, comm, step);
      } catch (const StepFailed&) {
      }
    });
    const auto first =
        std::find_if(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); });
    ASSERT_NE(first, errors.end()) << "no error at " << world << " ranks";
    for (const std::string& part : c.expected)
      EXPECT_THAT(*first, HasSubstr(part)) << world << " ranks";
  }
}

INSTANTIATE_TEST_SUITE_P(Ogb, MalformedSlices, testing::ValuesIn(kOgbCases), malformed_case_name);
INSTANTIATE_TEST_SUITE_P(Numpy, MalformedSlices, testing::ValuesIn(kNumpyCases),
                         malformed_case_name);
INSTANTIATE_TEST_SUITE_P(OgbBinary, MalformedSlices, testing::ValuesIn(kOgbBinaryCases),
                         malformed_case_name);

}  // namespace
}  // namespace adaqp

namespace adaqp {
namespace {

// A dataset.path that is not a directory is named as such whatever the format, relative paths
// resolved from the working directory (every rank reads them from its own).
TEST(DatasetPath, AMissingDirectoryIsNamedNotItsFiles) {
  test::TempDir dir;
  std::ofstream(dir.str("a_file")) << "x";
  for (const DatasetFormat format : {DatasetFormat::kAuto, DatasetFormat::kOgb,
                                     DatasetFormat::kNumpy, DatasetFormat::kGraphsaint}) {
    DatasetSpec spec;
    spec.format = format;
    spec.path = dir.str("missing");
    EXPECT_EQ(test::error_of<InputError>([&] { load_dataset(spec); }),
              spec.path + ": dataset.path: directory not found");
    spec.path = dir.str("a_file");
    EXPECT_EQ(test::error_of<InputError>([&] { load_dataset(spec); }),
              spec.path + ": dataset.path: not a directory");
  }
  DatasetSpec relative;
  relative.path = "no/such/dataset";
  const std::string error = test::error_of<InputError>([&] { load_dataset(relative); });
  EXPECT_TRUE(test::contains(error, "directory not found (relative to the working directory "))
      << error;
  EXPECT_TRUE(test::contains(error, "/no/such/dataset)")) << error;
}

}  // namespace
}  // namespace adaqp
