// Throughput of the OGB raw-layout loader: megabytes per second of compressed input and of
// decompressed CSV text, beside the time zlib alone needs to inflate the same files. With --slice,
// one rank's load of its slice (either OGB layout) in a process of its own: time and peak resident
// memory (the loader's per-rank cost; run the W processes side by side), and at W = 1 the dataset
// fingerprint.
// Usage: bench_loader DATASET_DIR [--repeats R]   (e.g. ../shared/datasets/coauthor-physics)
//        bench_loader DATASET_DIR --slice RANK --world W
#include <fmt/format.h>
#include <sys/resource.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"
#include "bench_options.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

// Decompressed size of one .gz file; throws on a read error.
uint64_t inflate_file(const std::string& path, std::vector<char>& buffer) {
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file) throw adaqp::InputError(path, "", "cannot open");
  uint64_t total = 0;
  int n = 0;
  while ((n = gzread(file.get(), buffer.data(), static_cast<unsigned>(buffer.size()))) > 0)
    total += static_cast<uint64_t>(n);
  int errnum = Z_OK;
  const char* msg = gzerror(file.get(), &errnum);
  if (n < 0 || errnum != Z_OK) throw adaqp::InputError(path, "", msg);
  return total;
}

int run(const std::string& dir, int repeats) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().string();
    if (entry.is_regular_file() && name.size() > 7 &&
        name.compare(name.size() - 7, 7, ".csv.gz") == 0)
      files.push_back(name);
  }
  uint64_t compressed = 0, uncompressed = 0;
  std::vector<char> buffer(size_t{1} << 20);
  const auto inflate_start = Clock::now();
  for (const auto& f : files) {
    compressed += fs::file_size(f);
    uncompressed += inflate_file(f, buffer);
  }
  const double inflate_s = seconds_since(inflate_start);

  std::vector<double> times;
  adaqp::Graph g;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    g = adaqp::load_ogb(dir, "");
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double mb = 1e6;
  const std::string name = g.name;
  std::cout << fmt::format(
                   "{{\"benchmark\":\"loader_ogb\",\"dataset\":\"{}\",\"repeats\":{},"
                   "\"compressed_bytes\":{},\"uncompressed_bytes\":{},\"load_s_median\":{:.4f},"
                   "\"load_s_min\":{:.4f},\"uncompressed_mb_per_s\":{:.1f},"
                   "\"compressed_mb_per_s\":{:.2f},\"inflate_only_s\":{:.4f},"
                   "\"inflate_only_uncompressed_mb_per_s\":{:.1f},\"nodes\":{},\"edges\":{},"
                   "\"features\":{},\"classes\":{},\"fingerprint\":\"{}\"}}",
                   name, repeats, compressed, uncompressed, median, times.front(),
                   uncompressed / mb / median, compressed / mb / median, inflate_s,
                   uncompressed / mb / inflate_s, g.num_nodes, g.num_edges(), g.feat_dim,
                   g.num_classes, adaqp::fingerprint(g))
            << "\n";
  std::cout << fmt::format(
                   "{}: loaded {} nodes, {} edges, {} features, {} classes in {:.3f} s (median of "
                   "{}): {:.1f} MB/s of CSV text ({:.1f} MB), {:.2f} MB/s of gzip input ({:.2f} "
                   "MB); zlib alone inflates the files in {:.3f} s ({:.1f} MB/s)",
                   name, g.num_nodes, g.num_edges(), g.feat_dim, g.num_classes, median, repeats,
                   uncompressed / mb / median, uncompressed / mb, compressed / mb / median,
                   compressed / mb, inflate_s, uncompressed / mb / inflate_s)
            << "\n";
  return 0;
}

int run_slice(const std::string& dir, int rank, int world) {
  const auto start = Clock::now();
  adaqp::GraphSlice s = adaqp::load_ogb_slice(dir, "", rank, world);
  const double load_s = seconds_since(start);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);  // ru_maxrss: KiB on Linux
  const std::string name = s.name;
  const int64_t first = s.first, rows = s.count(), in_edges = s.num_edges();
  const std::string fp = world == 1 ? adaqp::fingerprint(adaqp::whole_graph(std::move(s))) : "";
  std::cout << fmt::format(
                   "{{\"benchmark\":\"loader_ogb_slice\",\"dataset\":\"{}\",\"rank\":{},"
                   "\"world\":{},\"first\":{},\"rows\":{},\"in_edges\":{},\"load_s\":{:.3f},"
                   "\"peak_rss_mib\":{:.1f},\"fingerprint\":\"{}\"}}",
                   name, rank, world, first, rows, in_edges, load_s, usage.ru_maxrss / 1024.0, fp)
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  int repeats = 3, rank = -1, world = 1;
  adaqp::bench::Options cli("bench_loader",
                            "OGB loader throughput against zlib alone, or one rank's slice");
  cli.positional("DATASET_DIR", &dir, "a dataset in the OGB raw or binary layout")
      .add("--repeats", &repeats, "timed loads of the whole dataset (median reported)")
      .add("--slice", &rank, "load only this rank's slice (with --world)", 0)
      .add("--world", &world, "ranks the dataset is sliced for");
  cli.parse(argc, argv);
  if (rank < 0 && world != 1) cli.fail("--world needs --slice");
  if (rank >= world) cli.fail(fmt::format("--slice {} is not a rank of --world {}", rank, world));
  try {
    return rank < 0 ? run(dir, repeats) : run_slice(dir, rank, world);
  } catch (const std::exception& e) {
    std::cerr << "bench_loader: " << e.what() << "\n";
    return 1;
  }
}
