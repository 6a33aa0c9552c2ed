// Every structural check of a partition's part file (partition_dir.cpp read_part_file), one case
// each: a valid part is read, one array edited and the file written again with correct checksums,
// so that the check itself, not the checksum, must reject it, naming the file, the array and the
// problem. The fuzz target partition_loader reaches the same checks at random (fuzz/).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/partition_dir.h"
#include "array_files.h"
#include "test_util.h"

namespace adaqp {
namespace {

namespace fs = std::filesystem;

using test::Arrays;
using test::read_all;
using test::write_all;

template <typename T>
std::vector<T>& get(Arrays& a, const std::string& name) {
  return std::get<std::vector<T>>(a.at(name));
}
std::vector<int64_t>& i64(Arrays& a, const std::string& name) {
  return get<int64_t>(a, name);
}

// Scalars of a part (partition_dir.cpp enum Scalar).
constexpr size_t kRank = 0, kNumParts = 1, kGlobalNodes = 2, kNumCentral = 3;

struct Edit {
  const char* name;
  std::function<void(Arrays&)> apply;
  const char* array;    // named in the error
  const char* message;  // what the error says
};

int64_t owned(Arrays& a) {
  return static_cast<int64_t>(i64(a, "owned_gid").size());
}
int64_t halo(Arrays& a) {
  return static_cast<int64_t>(i64(a, "halo_gid").size());
}

const std::vector<Edit>& edits() {
  static const std::vector<Edit> e = {
      {"ScalarsCount", [](Arrays& a) { i64(a, "scalars").resize(3); }, "scalars",
       "has 3 entries, expected 7"},
      {"ScalarsRank", [](Arrays& a) { i64(a, "scalars")[kRank] = 2; }, "scalars",
       "holds rank 2, not 1"},
      {"ScalarsDisagreeWithMeta", [](Arrays& a) { i64(a, "scalars")[kNumParts] = 4; }, "scalars",
       "parts is 4 here, 3 in meta.yaml"},
      {"NodesDisagreeWithMeta", [](Arrays& a) { i64(a, "scalars")[kGlobalNodes] = 400; }, "scalars",
       "num_nodes is 400 here, 500 in meta.yaml"},
      {"CentralCount", [](Arrays& a) { i64(a, "scalars")[kNumCentral] = owned(a) + 1; }, "scalars",
       "bad central count"},
      {"OwnedCount", [](Arrays& a) { i64(a, "owned_gid").pop_back(); }, "owned_gid",
       "entries, expected"},
      {"OwnedIdRange", [](Arrays& a) { i64(a, "owned_gid")[0] = 500; }, "owned_gid",
       "entry 0 = 500 is outside [0, 500)"},
      {"HaloIdRange", [](Arrays& a) { i64(a, "halo_gid")[1] = -1; }, "halo_gid",
       "entry 1 = -1 is outside [0, 500)"},
      {"OwnedIdTwice", [](Arrays& a) { i64(a, "owned_gid")[3] = i64(a, "owned_gid")[0]; },
       "owned_gid", "entry 3 = node "},
      {"HaloIdOwnedToo", [](Arrays& a) { i64(a, "halo_gid")[2] = i64(a, "owned_gid")[5]; },
       "halo_gid", "entry 2 = node "},
      {"HaloIdTwice", [](Arrays& a) { i64(a, "halo_gid")[1] = i64(a, "halo_gid")[0]; }, "halo_gid",
       "is listed twice"},
      {"HaloOffsetsEnd", [](Arrays& a) { i64(a, "halo_offsets").back() += 1; }, "halo_offsets",
       "must run from 0 to"},
      {"HaloOffsetsDecrease", [](Arrays& a) { i64(a, "halo_offsets")[1] = halo(a) + 1; },
       "halo_offsets", "decreases at entry 2"},
      {"HaloFromItsOwnRank", [](Arrays& a) { i64(a, "halo_offsets")[1] = 0; }, "halo_offsets",
       "lists halo nodes of its own rank"},
      {"LocalIndptr", [](Arrays& a) { i64(a, "local_indptr").back() += 1; }, "local_indptr",
       "must run from 0 to"},
      {"LocalIndexRange", [](Arrays& a) { get<int32_t>(a, "local_indices")[0] = -3; },
       "local_indices", "entry 0 = -3 is outside"},
      {"HaloIndptr", [](Arrays& a) { i64(a, "halo_indptr").pop_back(); }, "halo_indptr",
       "entries, expected"},
      {"HaloIndexRange",
       [](Arrays& a) { get<int32_t>(a, "halo_indices")[0] = static_cast<int32_t>(halo(a)); },
       "halo_indices", "is outside"},
      {"CentralRowsWithHaloEdges",
       [](Arrays& a) {
         // Row 0 (central) gets the first halo edge of the first marginal row.
         auto& indptr = i64(a, "halo_indptr");
         const int64_t central = i64(a, "scalars")[kNumCentral];
         for (int64_t r = 1; r <= central; ++r) indptr[static_cast<size_t>(r)] = 1;
       },
       "halo_indptr", "central rows have halo edges"},
      {"InDegreeCount", [](Arrays& a) { i64(a, "owned_in_degree").pop_back(); }, "owned_in_degree",
       "entries, expected"},
      {"OutDegreeCount", [](Arrays& a) { i64(a, "owned_out_degree").push_back(1); },
       "owned_out_degree", "entries, expected"},
      {"HaloInDegreeCount", [](Arrays& a) { i64(a, "halo_in_degree").pop_back(); },
       "halo_in_degree", "entries, expected"},
      {"HaloOutDegreeCount", [](Arrays& a) { i64(a, "halo_out_degree").pop_back(); },
       "halo_out_degree", "entries, expected"},
      {"SendOffsets", [](Arrays& a) { i64(a, "send_offsets").back() -= 1; }, "send_offsets",
       "must run from 0 to"},
      {"SendIndexRange", [](Arrays& a) { i64(a, "send_idx")[0] = owned(a); }, "send_idx",
       "is outside"},
      {"SendIndexTwice",
       [](Arrays& a) {
         // Rank 0's rows: the first two of its segment made one.
         auto& idx = i64(a, "send_idx");
         idx[1] = idx[0];
       },
       "send_idx", "entry 1 = "},
      {"SendToItsOwnRank",
       [](Arrays& a) {
         // Rank 0's last row moved into rank 1's (own) segment.
         i64(a, "send_offsets")[1] -= 1;
       },
       "send_idx", "sends rows to its own rank 1"},
      {"FeatureCount", [](Arrays& a) { get<float>(a, "features").pop_back(); }, "features",
       "entries, expected"},
      {"LabelRange", [](Arrays& a) { i64(a, "labels")[0] = 4; }, "labels",
       "entry 0 = 4 is outside [0, 4)"},
      {"LabelCount", [](Arrays& a) { i64(a, "labels").pop_back(); }, "labels", "entries, expected"},
      {"MultilabelsOfASingleLabelDataset", [](Arrays& a) { get<uint8_t>(a, "multilabels") = {1}; },
       "multilabels", "has 1 entries, expected 0"},
      {"SplitCounts", [](Arrays& a) { i64(a, "global_split_counts").pop_back(); },
       "global_split_counts", "has 2 entries, expected 3"},
      {"TrainIndexRange", [](Arrays& a) { i64(a, "train_idx")[0] = owned(a); }, "train_idx",
       "is outside"},
      {"ValidIndexRange", [](Arrays& a) { i64(a, "valid_idx")[0] = -1; }, "valid_idx",
       "is outside"},
      {"TestIndexRange", [](Arrays& a) { i64(a, "test_idx")[0] = owned(a) + 7; }, "test_idx",
       "is outside"},
      {"NegativeDegree", [](Arrays& a) { i64(a, "owned_out_degree")[2] = -1; }, "owned_out_degree",
       "entry 2 = -1 is negative"},
      {"TrainIndexTwice", [](Arrays& a) { i64(a, "train_idx")[1] = i64(a, "train_idx")[0]; },
       "train_idx", "entry 1 = "},
      {"NodeInTwoSplits", [](Arrays& a) { i64(a, "test_idx")[0] = i64(a, "train_idx")[0]; },
       "test_idx", "is in another split too"},
      {"InDegreeIsNotTheRowsEntries", [](Arrays& a) { i64(a, "owned_in_degree")[0] += 1; },
       "owned_in_degree", "entry 0 is "},
      {"DegreeBeyondTheGraphsEdges",
       [](Arrays& a) { i64(a, "halo_out_degree")[0] = 1'000'000'000'000; }, "halo_out_degree",
       "entry 0 is 1000000000000, more than num_edges = "},
      {"NonFiniteFeature",
       [](Arrays& a) { get<float>(a, "features")[7] = std::numeric_limits<float>::infinity(); },
       "features", "node 1 (global id "},
      {"TrainCountDisagreesWithMeta",
       [](Arrays& a) {
         // The last training node moved to the test split: sound, but not what meta.yaml counts.
         auto& train = i64(a, "train_idx");
         auto& test = i64(a, "test_idx");
         test.insert(std::upper_bound(test.begin(), test.end(), train.back()), train.back());
         train.pop_back();
       },
       "train_idx", "but meta.yaml's counts[1].train says "},
      {"MissingArray", [](Arrays& a) { a.erase("halo_gid"); }, "halo_gid", "missing"},
      {"WrongType",
       [](Arrays& a) {
         const std::vector<int64_t> labels = i64(a, "labels");
         a["labels"] = std::vector<int32_t>(labels.begin(), labels.end());
       },
       "labels", "has dtype int32, expected int64"},
  };
  return e;
}

// The features as CSR (partition/part_features.h): a part of the graph below whose rows keep two
// values of 16 each.
const std::vector<Edit>& sparse_edits() {
  static const std::vector<Edit> e = {
      {"ColumnRange", [](Arrays& a) { get<int32_t>(a, "feature_columns")[0] = 16; },
       "feature_columns", "entry 0 = 16 (row 0) is outside [0, 16)"},
      {"ColumnsNotAscending",
       [](Arrays& a) {
         std::swap(get<int32_t>(a, "feature_columns")[0], get<int32_t>(a, "feature_columns")[1]);
       },
       "feature_columns", "does not ascend within row 0"},
      {"Indptr", [](Arrays& a) { i64(a, "feature_indptr").back() -= 1; }, "feature_indptr",
       "must run from 0 to"},
      {"ValueCount", [](Arrays& a) { get<float>(a, "feature_values").pop_back(); },
       "feature_values", "entries, expected"},
      {"NonFiniteValue",
       [](Arrays& a) {
         get<float>(a, "feature_values")[3] = std::numeric_limits<float>::quiet_NaN();
       },
       "feature_values", "node 1 (global id "},
      {"BothEncodings",
       [](Arrays& a) { a["features"] = std::vector<float>(static_cast<size_t>(owned(a) * 16)); },
       "features", "present beside feature_indptr, feature_columns or feature_values"},
      {"MissingColumns", [](Arrays& a) { a.erase("feature_columns"); }, "feature_columns",
       "missing"},
  };
  return e;
}

// Writes a 3-part partition of a generated graph into `dir` (with `sparse`, each node's features
// zero but for two of 16) and returns part 1's arrays, after checking that it loads.
Arrays valid_part(const std::string& dir, bool sparse) {
  GeneratorOptions g;
  g.num_nodes = 500;
  g.num_classes = 4;
  g.feat_dim = sparse ? 16 : 5;
  g.avg_degree = 6;
  g.seed = 11;
  Graph graph = generate_graph(g);
  if (sparse) {
    for (size_t k = 0; k < graph.features.size(); ++k)
      if (k % 16 != 2 && k % 16 != 9) graph.features[k] = 0.0f;
  }
  PartitionOptions opt;
  opt.method = PartitionMethod::kMetis;
  opt.parts = 3;
  opt.seed = 2;
  write_partition(dir, graph, opt);
  Arrays arrays = read_all((fs::path(dir) / "part-1" / "part.bin").string());
  EXPECT_EQ(arrays.count(sparse ? "feature_values" : "features"), 1u);
  EXPECT_NO_THROW(load_part(dir, 1, 3)) << "the unedited part must load";
  return arrays;
}

// Applies `edit` to part 1 of the partition in `dir` (its valid arrays `arrays`) and expects the
// load to fail naming the file, the array and the problem.
void expect_rejected(const std::string& dir, Arrays arrays, const Edit& edit) {
  const fs::path file = fs::path(dir) / "part-1" / "part.bin";
  edit.apply(arrays);
  write_all(file, arrays);
  try {
    load_part(dir, 1, 3);
    FAIL() << edit.name << ": the edited part loaded";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("'") + edit.array + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(edit.message), std::string::npos) << msg;
  }
}

class PartStructure : public ::testing::TestWithParam<size_t> {};

TEST_P(PartStructure, EditIsRejectedNamingFileArrayAndProblem) {
  const Edit& edit = edits()[GetParam()];
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  Arrays arrays = valid_part(dir, /*sparse=*/false);
  // The edits need central rows, halo nodes from rank 0 and rows sent to it: this part has them.
  ASSERT_GT(i64(arrays, "scalars")[kNumCentral], 0);
  ASSERT_GT(i64(arrays, "halo_offsets")[1], 0);
  ASSERT_GE(i64(arrays, "send_offsets")[1], 2);
  expect_rejected(dir, std::move(arrays), edit);
}

INSTANTIATE_TEST_SUITE_P(EveryCheck, PartStructure, ::testing::Range<size_t>(0, edits().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(edits()[info.param].name);
                         });

class SparseFeatureStructure : public ::testing::TestWithParam<size_t> {};

TEST_P(SparseFeatureStructure, EditIsRejectedNamingFileArrayAndProblem) {
  test::TempDir tmp;
  const std::string dir = tmp.str("part");
  expect_rejected(dir, valid_part(dir, /*sparse=*/true), sparse_edits()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(EveryCheck, SparseFeatureStructure,
                         ::testing::Range<size_t>(0, sparse_edits().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(sparse_edits()[info.param].name);
                         });

}  // namespace
}  // namespace adaqp
