// Fuzzes the OGB binary layout one archive member or file at a time. The dataset directory holds a
// valid tiny graph (4 nodes, 5 edges, 3 features, 3 classes: raw/data.npz with edge_index,
// node_feat, num_nodes_list, num_edges_list; raw/node-label.npz with node_label; split/main as
// .csv.gz). The first input byte picks (modulo 8) one of the five members (its archive is written
// again with the rest of the input as that member: deflated, or stored when bit 3 of the byte is
// set, so that range reads are fuzzed too), the raw bytes of either archive, or the training
// split's text; the rest of the input is its content. The directory is loaded whole and as the
// second of two slices, then restored.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "fuzz_npz.h"
#include "fuzz_util.h"

namespace {

using adaqp::fuzz::npy;
using adaqp::fuzz::NpzMembers;

const NpzMembers& data_members() {
  static const NpzMembers m = {
      {"edge_index.npy", npy<int64_t>("<i8", "(2, 5)", {0, 1, 2, 3, 1, 1, 2, 3, 0, 0})},
      {"node_feat.npy", npy<float>("<f4", "(4, 3)", {1, 0, 2, 0.5f, -1.25f, 0, 3, 3, 3, 0, 0, 0})},
      {"num_nodes_list.npy", npy<int64_t>("<i8", "(1,)", {4})},
      {"num_edges_list.npy", npy<int64_t>("<i8", "(1,)", {5})},
  };
  return m;
}

const NpzMembers& label_members() {
  static const NpzMembers m = {{"node_label.npy", npy<double>("<f8", "(4, 1)", {0, 1, 2, 1})}};
  return m;
}

constexpr char kTrain[] = "0\n1\n";

// The valid dataset, or one of its members or files replaced by `bytes` (which < 0: none).
void write_dataset(const std::filesystem::path& dir, int which, const std::string& bytes,
                   bool deflate) {
  const std::filesystem::path raw = dir / "raw";
  const int size = static_cast<int>(data_members().size());
  if (which == size + 1)
    adaqp::fuzz::write_file(raw / "data.npz", bytes);
  else
    adaqp::fuzz::write_npz(raw / "data.npz", data_members(), which < size ? which : -1, bytes,
                           deflate);
  if (which == size + 2)
    adaqp::fuzz::write_file(raw / "node-label.npz", bytes);
  else
    adaqp::fuzz::write_npz(raw / "node-label.npz", label_members(), which == size ? 0 : -1, bytes,
                           deflate);
  adaqp::fuzz::write_gz(dir / "split" / "main" / "train.csv.gz",
                        which == size + 3 ? bytes : kTrain);
}

const std::filesystem::path& dataset_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = adaqp::fuzz::scratch_dir() / "ogb_binary";
    std::filesystem::create_directories(d / "raw");
    write_dataset(d, -1, "", true);
    adaqp::fuzz::write_gz(d / "split" / "main" / "valid.csv.gz", std::string("2\n"));
    adaqp::fuzz::write_gz(d / "split" / "main" / "test.csv.gz", std::string("3\n"));
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::filesystem::path& dir = dataset_dir();
  const std::string content(reinterpret_cast<const char*>(data + 1), size - 1);
  write_dataset(dir, data[0] % 8, content, (data[0] & 8) == 0);
  try {
    adaqp::load_ogb(dir.string(), "");
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  try {
    adaqp::load_ogb_slice(dir.string(), "", 1, 2);
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  write_dataset(dir, -1, "", true);
  return 0;
}
