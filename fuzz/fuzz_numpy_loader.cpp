// Fuzzes the NumPy-layout loader one .npy file at a time. The dataset directory holds a valid tiny
// graph (4 nodes, 5 edges, 3 features, 3 classes); the first input byte picks the file to replace
// (modulo 6) and the rest is that file's bytes. The file is restored after each run.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "fuzz_util.h"

namespace {

constexpr std::array<const char*, 6> kFiles = {"edge_index.npy", "feat.npy",  "label.npy",
                                               "train.npy",      "valid.npy", "test.npy"};

const std::array<std::string, 6>& valid_files() {
  static const std::array<std::string, 6> files = {
      adaqp::fuzz::npy<int64_t>("<i8", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0}),
      adaqp::fuzz::npy<float>("<f4", "(4, 3)", {1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0}),
      adaqp::fuzz::npy<int64_t>("<i8", "(4,)", {0, 1, 2, 1}),
      adaqp::fuzz::npy<int64_t>("<i8", "(2,)", {0, 1}),
      adaqp::fuzz::npy<uint8_t>("|b1", "(4,)", {0, 0, 1, 0}),
      adaqp::fuzz::npy<int32_t>("<i4", "(1,)", {3}),
  };
  return files;
}

const std::filesystem::path& dataset_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = adaqp::fuzz::scratch_dir() / "numpy";
    for (size_t i = 0; i < kFiles.size(); ++i)
      adaqp::fuzz::write_file(d / kFiles[i], valid_files()[i]);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t which = data[0] % kFiles.size();
  const std::filesystem::path path = dataset_dir() / kFiles[which];
  adaqp::fuzz::write_file(path, data + 1, size - 1);
  try {
    adaqp::load_numpy(dataset_dir().string());
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  adaqp::fuzz::write_file(path, valid_files()[which]);
  return 0;
}
