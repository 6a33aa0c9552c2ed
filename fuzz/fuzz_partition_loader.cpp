// Fuzzes the partition loader: a valid 2-part partition of a small generated graph is written once;
// the low 2 bits of the first input byte pick what to change: 0, meta.yaml (the rest of the input
// is its text); 1, part-0/part.bin (the rest is its bytes: nearly every such input stops at a
// checksum); 2 or 3, one array of part-0/part.bin past its checksum (the rest is an edit of
// mutate_arrays, and the file is written with correct checksums, so the loader's structural checks
// of offsets, ranges, sizes and counts are what stop it). Then rank 0's part is loaded as a worker
// does (meta, part count, fingerprint). The files are restored after each run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/partition_dir.h"
#include "fuzz_util.h"

namespace {

struct Partition {
  std::filesystem::path dir;
  std::string meta_yaml, part_bin;
  std::vector<adaqp::fuzz::RawArray> part_arrays;
};

const Partition& partition() {
  static const Partition p = [] {
    Partition out;
    out.dir = adaqp::fuzz::scratch_dir() / "partition";
    adaqp::GeneratorOptions g;
    g.num_nodes = 40;
    g.num_classes = 3;
    g.feat_dim = 16;
    g.avg_degree = 3;
    adaqp::Graph graph = adaqp::generate_graph(g);
    // Two values of 16 a row: the part holds its features as CSR (partition/part_features.h),
    // whose decoding the dense encoding would leave unfuzzed (tests/partition cover both).
    for (size_t k = 0; k < graph.features.size(); ++k)
      if (k % 16 != 1 && k % 16 != 6) graph.features[k] = 0.0f;
    adaqp::PartitionOptions opt;
    opt.method = adaqp::PartitionMethod::kContiguous;
    opt.parts = 2;
    adaqp::write_partition(out.dir.string(), graph, opt);
    out.meta_yaml = adaqp::fuzz::read_file(out.dir / "meta.yaml");
    out.part_bin = adaqp::fuzz::read_file(out.dir / "part-0" / "part.bin");
    out.part_arrays = adaqp::fuzz::read_arrays(out.dir / "part-0" / "part.bin");
    return out;
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Partition& p = partition();
  const int what = data[0] & 3;
  const bool meta = what == 0;
  const std::filesystem::path path = meta ? p.dir / "meta.yaml" : p.dir / "part-0" / "part.bin";
  if (what < 2)
    adaqp::fuzz::write_file(path, data + 1, size - 1);
  else
    adaqp::fuzz::write_arrays(path, adaqp::fuzz::mutate_arrays(p.part_arrays, data + 1, size - 1));
  try {
    const adaqp::PartitionMeta m = adaqp::read_partition_meta(p.dir.string());
    adaqp::load_part(p.dir.string(), 0, m.parts);
  } catch (const adaqp::Error& e) {
    adaqp::fuzz::note_error(e);
  }
  adaqp::fuzz::write_file(path, meta ? p.meta_yaml : p.part_bin);
  return 0;
}
