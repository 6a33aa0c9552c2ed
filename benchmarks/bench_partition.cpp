// Generator and partitioner cost on a large synthetic graph: wall and CPU time (user + system) per
// phase and the process's peak resident memory after it (getrusage ru_maxrss), for each
// partitioning method. Everything runs on one thread; the CPU time is the figure to compare on a
// shared machine.
// Usage: bench_partition [--nodes N] [--avg-degree D] [--parts W] [--methods metis,random]
//                        [--seed S] [--dir TMPDIR]
// Defaults: 1M nodes, average degree 20 (20M directed edges), W = 8, metis and random.
// Prints one JSON line per measurement and a human-readable line after it.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "adaqp/common/clock.h"
#include "adaqp/graph/generator.h"
#include "adaqp/partition/assign_parts.h"
#include "adaqp/partition/part.h"
#include "adaqp/partition/partition_dir.h"
#include "bench_options.h"

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto sec = [](const timeval& t) { return t.tv_sec + 1e-6 * t.tv_usec; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

struct Elapsed {
  double wall, cpu;
};

// Wall and CPU time since construction.
class Timer {
 public:
  Elapsed elapsed() const { return {adaqp::steady_now_s() - wall0_, cpu_seconds() - cpu0_}; }

 private:
  double wall0_ = adaqp::steady_now_s();
  double cpu0_ = cpu_seconds();
};

void report(const std::string& phase, const std::string& method, Elapsed t,
            const std::string& extra_json, const std::string& extra_text) {
  const double wall = t.wall, cpu = t.cpu, rss = peak_rss_mb();
  std::printf(
      "{\"bench\": \"partition\", \"phase\": \"%s\", \"method\": \"%s\", \"seconds\": %.4f, "
      "\"cpu_seconds\": %.4f, \"peak_rss_mb\": %.1f%s}\n",
      phase.c_str(), method.c_str(), wall, cpu, rss, extra_json.c_str());
  std::printf("# %-16s %-10s %8.3f s wall %8.3f s cpu  peak RSS %7.1f MB%s\n", phase.c_str(),
              method.c_str(), wall, cpu, rss, extra_text.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  adaqp::GeneratorOptions gen;
  gen.num_nodes = 1000000;
  gen.avg_degree = 20;
  int parts = 8;
  std::vector<std::string> methods = {"metis", "random"};
  std::string dir = std::filesystem::temp_directory_path().string();
  int64_t seed = static_cast<int64_t>(gen.seed);
  adaqp::bench::Options cli("bench_partition",
                            "Generator and partitioner cost on a large synthetic graph");
  cli.add("--nodes", &gen.num_nodes, "nodes of the generated graph")
      .add("--avg-degree", &gen.avg_degree, "average in-degree", 1e-3, 1e6)
      .add("--parts", &parts, "parts to split it into")
      .add("--methods", &methods, "partitioning methods to run")
      .add("--seed", &seed, "generator seed", 0)
      .add("--dir", &dir, "where the partition is written");
  cli.parse(argc, argv);
  gen.seed = static_cast<uint64_t>(seed);

  try {
    const Timer gen_timer;
    const adaqp::Graph g = adaqp::generate_graph(gen);
    char extra[256];
    std::snprintf(extra, sizeof extra, ", \"nodes\": %lld, \"edges\": %lld",
                  static_cast<long long>(g.num_nodes), static_cast<long long>(g.num_edges()));
    report("generate", "-", gen_timer.elapsed(), extra,
           "  (" + std::to_string(g.num_nodes) + " nodes, " + std::to_string(g.num_edges()) +
               " directed edges)");

    for (const std::string& method : methods) {
      adaqp::PartitionOptions opt;
      opt.method = adaqp::parse_partition_method(method);
      opt.parts = parts;
      const Timer assign_timer;
      const std::vector<int32_t> owner = adaqp::assign_parts(g, opt);
      const Elapsed assign_time = assign_timer.elapsed();
      const int64_t cut = adaqp::edge_cut(g, owner);
      std::snprintf(extra, sizeof extra,
                    ", \"parts\": %d, \"edge_cut\": %lld, \"cut_fraction\": %.4f", parts,
                    static_cast<long long>(cut),
                    static_cast<double>(cut) / static_cast<double>(g.num_edges()));
      char text[128];
      std::snprintf(text, sizeof text, "  edge cut %lld (%.2f%% of edges)",
                    static_cast<long long>(cut),
                    100.0 * static_cast<double>(cut) / static_cast<double>(g.num_edges()));
      report("assign_parts", method, assign_time, extra, text);

      const Timer build_timer;
      int64_t halo = 0;
      for (int r = 0; r < parts; ++r) halo += adaqp::build_part(g, owner, r).num_halo();
      std::snprintf(extra, sizeof extra, ", \"parts\": %d, \"halo_rows\": %lld", parts,
                    static_cast<long long>(halo));
      report("build_parts", method, build_timer.elapsed(), extra,
             "  " + std::to_string(halo) + " halo rows over all parts");

      const std::string out = dir + "/bench_partition-" + std::to_string(::getpid()) + "-" + method;
      const Timer write_timer;
      adaqp::write_partition(out, g, opt);
      const Elapsed write_time = write_timer.elapsed();
      std::error_code ec;
      std::filesystem::remove_all(out, ec);
      std::snprintf(extra, sizeof extra, ", \"parts\": %d", parts);
      report("write_partition", method, write_time, extra,
             "  (assign + fingerprint + build + write)");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_partition: %s\n", e.what());
    return 1;
  }
  return 0;
}
