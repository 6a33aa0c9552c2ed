#include "adaqp/graph/dataset.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "adaqp/common/error.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

std::string detect_format(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) throw InputError(path, "", "dataset directory not found");
  if (fs::exists(fs::path(path) / "raw" / "edge.csv.gz", ec)) return "ogb";
  if (fs::exists(fs::path(path) / "edge_index.npy", ec)) return "numpy";
  if (fs::exists(fs::path(path) / "adj_full.npz", ec)) return "graphsaint";
  throw InputError(path, "",
                   "not a dataset directory: expected raw/edge.csv.gz (OGB layout), "
                   "edge_index.npy (NumPy layout) or adj_full.npz (GraphSAINT layout)");
}

}  // namespace

Graph load_dataset(const DatasetSpec& spec) {
  const auto start = std::chrono::steady_clock::now();
  if (spec.format == "synthetic" && !spec.path.empty())
    throw ConfigError("dataset path '" + spec.path +
                      "' given with format synthetic, which reads no files (use format auto, or "
                      "no path for the generator)");
  std::string format = spec.format;
  if (format == "auto") format = spec.path.empty() ? "synthetic" : detect_format(spec.path);
  Graph g;
  if (format == "ogb") {
    g = load_ogb(spec.path, spec.split);
  } else if (format == "numpy") {
    g = load_numpy(spec.path);
  } else if (format == "graphsaint") {
    g = load_graphsaint(spec.path);
  } else if (format == "synthetic") {
    g = generate_graph(spec.synthetic);
  } else {
    throw ConfigError("dataset format: unknown value '" + spec.format +
                      "' (expected ogb, numpy, graphsaint, synthetic or auto)");
  }
  apply_transform(g, spec.transform);
  g.validate(format == "synthetic" ? "synthetic graph" : spec.path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info(
      "loaded {} ({}): {} nodes, {} edges, {} features, {} classes{}, split {}/{}/{} in "
      "{:.2f} s",
      g.name, format, g.num_nodes, g.num_edges(), g.feat_dim, g.num_classes,
      g.multilabel ? " (multi-label)" : "", g.train.size(), g.valid.size(), g.test.size(), seconds);
  return g;
}

}  // namespace adaqp
