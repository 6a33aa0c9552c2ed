#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
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

std::string load_error(const std::string& dir, const std::string& split = "") {
  try {
    load_ogb(dir, split);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// The bytes of `text` gzip-compressed (one member).
std::string gzip_bytes(const TempDir& tmp, const std::string& text) {
  const std::string path = tmp.str("member.gz");
  test::write_gz(path, text);
  return test::read_bytes(path);
}

// gzip -c a b > ab reads as a then b; zero bytes after the last member are padding. Anything else
// after a member is an error naming the file (a damaged second member read as the end of the
// file: a split lost its ids without a word).
TEST(OgbLoader, ReadsConcatenatedGzipMembersAndRefusesOtherBytesAfterThem) {
  TempDir tmp;
  const std::string dir = tmp.str("ogb");
  test::write_ogb(dir, test::tiny_ogb_text());
  const std::string train = dir + "/split/main/train.csv.gz";
  test::write_file(train, gzip_bytes(tmp, "0\n") + gzip_bytes(tmp, "1\n") + std::string(7, '\0'));
  EXPECT_THAT(load_ogb(dir, "").train, ElementsAre(0, 1));
  std::string damaged = gzip_bytes(tmp, "1\n");
  damaged[0] = 'x';
  test::write_file(train, gzip_bytes(tmp, "0\n") + damaged);
  EXPECT_THAT(load_error(dir), HasSubstr("split/main/train.csv.gz: after line 1: bytes after the "
                                         "end of the gzip data are not gzip"));
  test::write_file(train, gzip_bytes(tmp, "0\n") + std::string(3, '\0') + "\x1f");
  EXPECT_THAT(load_error(dir), HasSubstr("split/main/train.csv.gz: after line 1: bytes after"));
}

TEST(OgbLoader, LoadsTinyDatasetExactly) {
  TempDir tmp;
  const std::string dir = tmp.str("tiny-ogb");
  test::write_ogb(dir, test::tiny_ogb_text());
  const Graph g = load_ogb(dir, "");
  EXPECT_EQ(g.name, "tiny-ogb");
  EXPECT_EQ(g.num_nodes, 4);
  EXPECT_THAT(g.indptr, ElementsAre(0, 2, 3, 4, 5));
  EXPECT_THAT(g.indices, ElementsAre(1, 3, 0, 1, 2));
  EXPECT_EQ(g.feat_dim, 3);
  EXPECT_THAT(g.features, ElementsAre(1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0));
  EXPECT_FALSE(g.multilabel);
  EXPECT_EQ(g.num_classes, 3);
  EXPECT_THAT(g.labels, ElementsAre(0, 1, 2, 1));
  EXPECT_THAT(g.train, ElementsAre(0, 1));
  EXPECT_THAT(g.valid, ElementsAre(2));
  EXPECT_THAT(g.test, ElementsAre(3));
  g.validate(dir);
}

TEST(OgbLoader, AcceptsCrlfSpacesExponentsAndUnsortedSplits) {
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  text["raw/node-feat.csv.gz"] = "1e0, 0 ,2.5E-1\r\n-0.0,12345678,3\r\n0.1,7,1e-3\r\n0,0,0";
  text["raw/edge.csv.gz"] = "0,1\r\n1,2\r\n2,3\r\n3,0\r\n1,0";
  text["split/main/train.csv.gz"] = "1\n0\n";
  test::write_ogb(tmp.str(), text);
  const Graph g = load_ogb(tmp.str(), "");
  EXPECT_THAT(g.features, ElementsAre(1, 0, 0.25f, 0, 12345678.0f, 3, 0.1f, 7, 0.001f, 0, 0, 0));
  EXPECT_EQ(g.num_edges(), 5);
  EXPECT_THAT(g.train, ElementsAre(0, 1));
}

// Values below float32's smallest magnitude (float64 data written out) round to zero or a
// subnormal, as the binary layouts' float64 values do; only too large a magnitude is refused
// (test_malformed_inputs.cpp).
TEST(OgbLoader, ValuesTooSmallForFloat32RoundToZero) {
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  text["raw/node-feat.csv.gz"] = "1e-46,-1e-400,1e-40\n0,0,0\n0,0,0\n0,0,0";
  test::write_ogb(tmp.str(), text);
  const Graph g = load_ogb(tmp.str(), "");
  EXPECT_EQ(g.features[0], 0.0f);
  EXPECT_EQ(g.features[1], 0.0f);
  EXPECT_TRUE(std::signbit(g.features[1]));
  EXPECT_EQ(g.features[2], static_cast<float>(1e-40));
}

// Every value is the float from_chars gives its text, bit for bit: plain decimals (which skip the
// general parser) at the edges of the short path (2^24, ten digits after the point, signs, zeros,
// leading zeros) and random ones of every length, beside text only the general parser reads.
TEST(OgbLoader, FeaturesAreFromCharsBitForBit) {
  std::vector<std::string> texts = {"0",           "-0",           "0.0",
                                    "-0.0",        "007",          "16777215",
                                    "16777216",    "16777217",     "123456789",
                                    "0.1",         "-0.1",         "0.3333333",
                                    "1.0000001",   "0.0000000001", "0.00000000001",
                                    "9.999999999", "1677721.5",    "1.5e3",
                                    "-2.5E-3",     " 4.25",        "7 ",
                                    "1.",          ".5",           "-.5",
                                    "1e-40",       "3.4028234e38", "0.57943",
                                    "-0.057943",   "1677.7216",    "99999999.9"};
  std::mt19937_64 rng(5);
  for (int i = 0; i < 3000; ++i) {
    const int whole = static_cast<int>(rng() % 9), fraction = static_cast<int>(rng() % 12);
    std::string t = rng() % 2 ? "-" : "";
    t += std::to_string(rng() % 10);
    for (int d = 0; d < whole; ++d) t += static_cast<char>('0' + rng() % 10);
    if (fraction > 0) t += ".";
    for (int d = 0; d < fraction; ++d) t += static_cast<char>('0' + rng() % 10);
    texts.push_back(t);
  }
  std::string lines;
  const size_t rows = (texts.size() + 2) / 3;
  texts.resize(rows * 3, "0");
  for (size_t r = 0; r < rows; ++r)
    lines += texts[3 * r] + "," + texts[3 * r + 1] + "," + texts[3 * r + 2] + "\n";
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  text["raw/node-feat.csv.gz"] = lines;
  text["raw/num-node-list.csv.gz"] = std::to_string(rows) + "\n";
  std::string labels;
  for (size_t r = 0; r < rows; ++r) labels += std::to_string(r % 3) + "\n";
  text["raw/node-label.csv.gz"] = labels;
  test::write_ogb(tmp.str(), text);
  const Graph g = load_ogb(tmp.str(), "");
  ASSERT_EQ(g.features.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string_view t = texts[i];
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    float want = 0;
    std::from_chars(t.data(), t.data() + t.size(), want);
    uint32_t got_bits = 0, want_bits = 0;
    std::memcpy(&got_bits, &g.features[i], 4);
    std::memcpy(&want_bits, &want, 4);
    EXPECT_EQ(got_bits, want_bits)
        << "'" << texts[i] << "': " << g.features[i] << " against " << want;
  }
}

TEST(OgbLoader, ReadsMultiLabelColumns) {
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  text["raw/node-label.csv.gz"] = "1,0,0,1,0\n0,0,0,0,0\n1,1,1,1,1\n0,1,0,0,1\n";
  test::write_ogb(tmp.str(), text);
  const Graph g = load_ogb(tmp.str(), "");
  EXPECT_TRUE(g.multilabel);
  EXPECT_EQ(g.num_classes, 5);
  EXPECT_TRUE(g.labels.empty());
  EXPECT_THAT(g.multilabels,
              ElementsAre(1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1));
  g.validate(tmp.str());
}

TEST(OgbLoader, ChoosesAmongSeveralSplits) {
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  text["split/other/train.csv.gz"] = "3\n";
  text["split/other/valid.csv.gz"] = "1\n";
  text["split/other/test.csv.gz"] = "0\n2\n";
  test::write_ogb(tmp.str(), text);
  EXPECT_THAT(
      load_error(tmp.str()),
      HasSubstr("split: several splits found (main, other); choose one with dataset.split"));
  EXPECT_THAT(load_error(tmp.str(), "missing"),
              HasSubstr("split 'missing' not found (available: main, other)"));
  const Graph g = load_ogb(tmp.str(), "other");
  EXPECT_THAT(g.train, ElementsAre(3));
  EXPECT_THAT(g.valid, ElementsAre(1));
  EXPECT_THAT(g.test, ElementsAre(0, 2));
}

TEST(OgbLoader, RequiresASplitFolder) {
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  for (const char* name : {"train", "valid", "test"})
    text.erase(std::string("split/main/") + name + ".csv.gz");
  test::write_ogb(tmp.str(), text);
  EXPECT_THAT(load_error(tmp.str()), HasSubstr(tmp.str("split") + ": no split folder found"));
}

TEST(OgbLoader, ReadsLinesLongerThanTheReadBuffer) {
  // 2 nodes x 300000 features: each line is about 1.2 MB, more than one read chunk.
  TempDir tmp;
  FileMap text = test::tiny_ogb_text();
  const int64_t dim = 300000;
  std::string feat;
  for (int node = 0; node < 4; ++node) {
    for (int64_t j = 0; j < dim; ++j) {
      if (j > 0) feat += ',';
      feat += std::to_string((j * 7 + node) % 1000);
    }
    feat += '\n';
  }
  text["raw/node-feat.csv.gz"] = feat;
  test::write_ogb(tmp.str(), text);
  const Graph g = load_ogb(tmp.str(), "");
  ASSERT_EQ(g.feat_dim, dim);
  for (int node = 0; node < 4; ++node) {
    for (int64_t j : {int64_t{0}, int64_t{1}, dim / 2, dim - 1})
      EXPECT_EQ(g.features[node * dim + j], static_cast<float>((j * 7 + node) % 1000));
  }
}

TEST(LoadDataset, DetectsFormatAndAppliesTransform) {
  TempDir tmp;
  test::write_ogb(tmp.str("ogb"), test::tiny_ogb_text());
  test::write_files(tmp.str("npy"), test::tiny_numpy_files());
  DatasetSpec spec;
  spec.path = tmp.str("ogb");
  spec.transform.symmetrize = true;
  spec.transform.self_loops = true;
  spec.transform.row_normalize = true;
  const Graph from_ogb = load_dataset(spec);
  EXPECT_EQ(from_ogb.num_edges(), 12);
  EXPECT_FLOAT_EQ(from_ogb.features[0], 1.0f / 3);
  spec.path = tmp.str("npy");
  const Graph from_numpy = load_dataset(spec);
  EXPECT_EQ(fingerprint(from_ogb), fingerprint(from_numpy));
  spec.format = DatasetFormat::kOgb;  // an OGB load of the NumPy directory
  EXPECT_THAT(test::error_of<InputError>([&] { load_dataset(spec); }),
              HasSubstr(tmp.str("npy") + ": neither raw/edge.csv.gz nor raw/data.npz found"));
}

TEST(LoadDataset, RejectsANonDatasetDirectory) {
  TempDir tmp;
  DatasetSpec spec;
  spec.path = tmp.str();
  spec.format = DatasetFormat::kAuto;
  try {
    load_dataset(spec);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(tmp.str() + ": not a dataset directory"));
  }
  spec.path = tmp.str("absent");
  EXPECT_EQ(test::error_of<InputError>([&] { load_dataset(spec); }),
            tmp.str("absent") + ": dataset.path: directory not found");
  spec.path = tmp.str(std::string(300, 'a'));  // a name longer than file systems allow
  EXPECT_EQ(test::error_of<InputError>([&] { load_dataset(spec); }),
            spec.path + ": dataset.path: File name too long");
}

// A directory holding two formats' files (a dataset converted in place) is not guessed between.
TEST(LoadDataset, AutoRefusesADirectoryOfTwoFormats) {
  TempDir tmp;
  test::write_ogb(tmp.str("both"), test::tiny_ogb_text());
  test::write_files(tmp.str("both"), test::tiny_numpy_files());
  DatasetSpec spec;
  spec.path = tmp.str("both");
  EXPECT_EQ(
      test::error_of<InputError>([&] { load_dataset(spec); }),
      tmp.str("both") +
          ": dataset.format: auto finds the files of several formats, raw/edge.csv.gz (OGB "
          "CSV layout) and edge_index.npy (NumPy layout): set dataset.format to ogb or numpy");
  spec.format = DatasetFormat::kNumpy;
  EXPECT_EQ(load_dataset(spec).num_nodes, 4);
}

TEST(LoadDataset, AutoWithoutPathGeneratesAndSyntheticRefusesAPath) {
  DatasetSpec spec;
  spec.synthetic.num_nodes = 200;
  spec.synthetic.feat_dim = 4;
  spec.synthetic.avg_degree = 4;
  ASSERT_EQ(spec.format, DatasetFormat::kAuto);
  const Graph generated = load_dataset(spec);
  EXPECT_EQ(generated.name, "synthetic");
  EXPECT_EQ(generated.num_nodes, 200);
  spec.format = DatasetFormat::kSynthetic;
  EXPECT_EQ(fingerprint(load_dataset(spec)), fingerprint(generated));
  spec.path = "some/dir";
  try {
    load_dataset(spec);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dataset path 'some/dir' given with format synthetic"));
  }
}

// Only the OGB layout names its splits; elsewhere a split name would be ignored, so it is refused.
TEST(LoadDataset, ASplitNameWithAnotherLayoutIsRefused) {
  TempDir tmp;
  test::write_files(tmp.str("npy"), test::tiny_numpy_files());
  DatasetSpec spec;
  spec.path = tmp.str("npy");
  spec.split = "nope";
  try {
    load_dataset(spec);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("dataset.split = 'nope': only the OGB layout has named splits"));
    EXPECT_THAT(e.what(), HasSubstr(tmp.str("npy") + " is read as the numpy layout"));
  }
  // An OGB directory read as another layout by dataset.format: the error says it was chosen.
  test::write_ogb(tmp.str("ogb"), test::tiny_ogb_text());
  spec.path = tmp.str("ogb");
  spec.format = DatasetFormat::kNumpy;
  EXPECT_THAT(test::error_of<ConfigError>([&] { load_dataset(spec); }),
              HasSubstr(tmp.str("ogb") + " is read (dataset.format) as the numpy layout"));
  DatasetSpec generated;
  generated.synthetic.num_nodes = 50;
  generated.split = "public";
  try {
    load_dataset(generated);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the generated graph is read as the synthetic layout"));
  }
}

}  // namespace
}  // namespace adaqp
