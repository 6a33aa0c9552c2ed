// Fuzzes the partition loader: a valid 2-part partition of a small generated graph is written once;
// the first input byte picks the file to replace (even: meta.yaml, odd: part-0/part.bin) and the
// rest is its content. Then rank 0's part is loaded as a worker does (meta, part count,
// fingerprint). The file is restored after each run.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/partition_store.h"
#include "fuzz_util.h"

namespace {

struct Partition {
  std::filesystem::path dir;
  std::string meta_yaml, part_bin;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const Partition& partition() {
  static const Partition p = [] {
    Partition out;
    out.dir = adaqp::fuzz::scratch_dir() / "partition";
    adaqp::GeneratorOptions g;
    g.num_nodes = 40;
    g.num_classes = 3;
    g.feat_dim = 4;
    g.avg_degree = 3;
    adaqp::PartitionOptions opt;
    opt.method = PartitionMethod::kContiguous;
    opt.parts = 2;
    adaqp::write_partition(out.dir.string(), adaqp::generate_graph(g), opt);
    out.meta_yaml = read_file(out.dir / "meta.yaml");
    out.part_bin = read_file(out.dir / "part-0" / "part.bin");
    return out;
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Partition& p = partition();
  const bool meta = (data[0] & 1) == 0;
  const std::filesystem::path path = meta ? p.dir / "meta.yaml" : p.dir / "part-0" / "part.bin";
  adaqp::fuzz::write_file(path, data + 1, size - 1);
  try {
    const adaqp::PartitionMeta m = adaqp::read_partition_meta(p.dir.string());
    adaqp::load_part(p.dir.string(), 0, m.parts, m.dataset_fingerprint);
  } catch (const adaqp::Error&) {
  }
  adaqp::fuzz::write_file(path, meta ? p.meta_yaml : p.part_bin);
  return 0;
}
