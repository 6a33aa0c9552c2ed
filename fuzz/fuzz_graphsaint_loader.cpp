// Fuzzes the GraphSAINT-layout loader one file or archive member at a time. The dataset directory
// holds a valid tiny graph (4 nodes, 5 edges, 3 features, 3 classes: adj_full.npz with its five
// .npy members, feats.npy, class_map.json, role.json); the first input byte picks (modulo 9) one of
// the five members of adj_full.npz (the archive is written again, deflated, with the rest of the
// input as that member), the raw bytes of adj_full.npz, or one of the other three files, and the
// rest of the input is its content. The dataset is restored after each run.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "fuzz_npz.h"
#include "fuzz_util.h"

namespace {

using adaqp::fuzz::npy;
using File = std::pair<const char*, std::string>;  // name, valid bytes

const adaqp::fuzz::NpzMembers& members() {
  static const adaqp::fuzz::NpzMembers m = {
      {"format.npy", npy<char>("|S3", "()", {'c', 's', 'r'})},
      {"shape.npy", npy<int64_t>("<i8", "(2,)", {4, 4})},
      {"indptr.npy", npy<int64_t>("<i8", "(5,)", {0, 2, 3, 4, 5})},
      {"indices.npy", npy<int32_t>("<i4", "(5,)", {3, 1, 0, 1, 2})},
      {"data.npy", npy<float>("<f4", "(5,)", {1, 1, 1, 1, 1})},
  };
  return m;
}

const std::array<File, 3>& files() {
  static const std::array<File, 3> f = {{
      {"feats.npy", npy<double>("<f8", "(4, 3)", {1, 0, 2, 0.5, -1.25, 0, 3, 3, 3, 0, 0, 0})},
      {"class_map.json", R"({"3": 1, "0": 0, "2": 2, "1": 1})"},
      {"role.json", R"({"tr": [1, 0], "va": [2], "te": [3]})"},
  }};
  return f;
}

// Writes adj_full.npz of the valid members, member `replaced` (if any) holding `bytes` instead.
void write_npz(const std::filesystem::path& path, int replaced, const std::string& bytes) {
  adaqp::fuzz::write_npz(path, members(), replaced, bytes);
}

const std::filesystem::path& dataset_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = adaqp::fuzz::scratch_dir() / "graphsaint";
    std::filesystem::create_directories(d);
    write_npz(d / "adj_full.npz", -1, "");
    for (const File& f : files()) adaqp::fuzz::write_file(d / f.first, f.second);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::filesystem::path& dir = dataset_dir();
  const int which = data[0] % 9;
  const std::string content(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::filesystem::path npz = dir / "adj_full.npz";
  if (which < 5) {
    write_npz(npz, which, content);
  } else if (which == 5) {
    adaqp::fuzz::write_file(npz, content);
  } else {
    adaqp::fuzz::write_file(dir / files()[static_cast<size_t>(which - 6)].first, content);
  }
  try {
    adaqp::load_graphsaint(dir.string());
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  if (which <= 5)
    write_npz(npz, -1, "");
  else
    adaqp::fuzz::write_file(dir / files()[static_cast<size_t>(which - 6)].first,
                            files()[static_cast<size_t>(which - 6)].second);
  return 0;
}
