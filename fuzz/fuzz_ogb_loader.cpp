// Fuzzes the OGB raw-layout loader one file at a time. The dataset directory holds a valid tiny
// graph (4 nodes, 3 features, 3 classes); the first input byte picks the file to replace (low 3
// bits) and whether the rest is its text, gzip-compressed here, or the raw bytes of the .gz file
// (bit 3); the rest of the input is the content. The file is restored after each run.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "fuzz_util.h"

namespace {

using File = std::pair<const char*, const char*>;  // path in the dataset, valid text
constexpr std::array<File, 8> kFiles = {{
    {"raw/edge.csv.gz", "0,1\n1,2\n2,3\n3,0\n1,0\n"},
    {"raw/node-feat.csv.gz", "1,0,2\n0.5,-1.25,0\n3,3,3\n0,0,0\n"},
    {"raw/node-label.csv.gz", "0\n1\n2\n1\n"},
    {"raw/num-node-list.csv.gz", "4\n"},
    {"raw/num-edge-list.csv.gz", "5\n"},
    {"split/main/train.csv.gz", "0\n1\n"},
    {"split/main/valid.csv.gz", "2\n"},
    {"split/main/test.csv.gz", "3\n"},
}};

const std::filesystem::path& dataset_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = adaqp::fuzz::scratch_dir() / "ogb";
    for (const File& f : kFiles) adaqp::fuzz::write_gz(d / f.first, std::string(f.second));
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const File& file = kFiles[data[0] & 7];
  const std::filesystem::path path = dataset_dir() / file.first;
  if (data[0] & 8)
    adaqp::fuzz::write_file(path, data + 1, size - 1);
  else
    adaqp::fuzz::write_gz(path, data + 1, size - 1);
  try {
    adaqp::load_ogb(dataset_dir().string(), "");
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  adaqp::fuzz::write_gz(path, std::string(file.second));
  return 0;
}
