// Fuzzes the loader of OGB's heterogeneous raw layout one file at a time. The dataset directory
// holds a valid tiny typed graph (authors, papers, topics; three relations); the first input byte
// picks the file to replace (its value modulo the file count, from the low 4 bits) and whether the
// rest is its text, gzip-compressed here, or the raw bytes of the .gz file (bit 4); the rest of the
// input is the content. The file is restored after each run.
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
constexpr std::array<File, 13> kFiles = {{
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
}};

const std::filesystem::path& dataset_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = adaqp::fuzz::scratch_dir() / "ogb_hetero";
    for (const File& f : kFiles) adaqp::fuzz::write_gz(d / f.first, std::string(f.second));
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const File& file = kFiles[(data[0] & 15) % kFiles.size()];
  const std::filesystem::path path = dataset_dir() / file.first;
  if (data[0] & 16)
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
