#include "adaqp/graph/dataset.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <vector>

#include "adaqp/common/clock.h"
#include "adaqp/common/error.h"
#include "adaqp/common/paths.h"

namespace adaqp {
namespace fs = std::filesystem;
namespace {

// A file that identifies a layout in a dataset directory (auto detection).
struct Marker {
  const char* file;    // relative to the dataset directory
  const char* layout;  // for the error of a directory no loader recognises
};

// One loader: the format it reads, the layouts it recognises, and how it loads. A new format is
// one row here and its loader.
struct Loader {
  DatasetFormat format;
  std::vector<Marker> markers;  // empty: reads no files
  Graph (*load)(const DatasetSpec& spec);
};

const Loader kLoaders[] = {
    // load_ogb picks the layout: heterogeneous where raw/num-node-dict.csv.gz exists, CSV where
    // raw/edge.csv.gz exists, binary otherwise.
    {DatasetFormat::kOgb,
     {{"raw/edge.csv.gz", "OGB CSV layout"},
      {"raw/data.npz", "OGB binary layout"},
      {"raw/num-node-dict.csv.gz", "OGB heterogeneous layout"}},
     [](const DatasetSpec& s) { return load_ogb(s.path, s.split, edge_feature_nodes(s)); }},
    {DatasetFormat::kNumpy,
     {{"edge_index.npy", "NumPy layout"}},
     [](const DatasetSpec& s) { return load_numpy(s.path, edge_feature_nodes(s)); }},
    {DatasetFormat::kGraphsaint,
     {{"adj_full.npz", "GraphSAINT layout"}},
     [](const DatasetSpec& s) { return load_graphsaint(s.path); }},
    {DatasetFormat::kSynthetic,
     {},
     [](const DatasetSpec& s) { return generate_graph(s.synthetic); }},
};

const Loader& loader_of(DatasetFormat format) {
  for (const Loader& l : kLoaders) {
    if (l.format == format) return l;
  }
  throw InvariantError(std::string("no loader for dataset format ") + to_string(format));
}

// InputError unless `path` is a directory; a relative path is shown resolved, since it is read from
// the working directory of every rank, not from the job file's.
void require_directory(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return;
  const fs::path p(path);
  const std::string resolved = p.is_absolute()
                                   ? ""
                                   : fmt::format(" (relative to the working directory {}: {})",
                                                 fs::current_path(ec).string(),
                                                 directory_path(fs::absolute(p, ec)).string());
  // exists() reports a missing path without an error code: one set is another failure (a name too
  // long, a directory that may not be searched).
  const bool exists = fs::exists(path, ec);
  throw InputError(path, "dataset.path",
                   (exists ? "not a directory"
                    : ec   ? ec.message()
                           : "directory not found") +
                       resolved);
}

// The one format whose files the directory holds. Files of two formats side by side (a dataset
// converted in place) are not guessed between.
DatasetFormat detect_format(const std::string& path) {
  std::error_code ec;
  std::string expected, found;
  std::vector<DatasetFormat> formats;
  for (const Loader& l : kLoaders) {
    for (const Marker& m : l.markers) {
      const std::string marker = std::string(m.file) + " (" + m.layout + ")";
      expected += (expected.empty() ? "" : " or ") + marker;
      if (!fs::exists(fs::path(path) / m.file, ec)) continue;
      if (formats.empty() || formats.back() != l.format) {
        formats.push_back(l.format);
        found += (found.empty() ? "" : " and ") + marker;
      }
    }
  }
  if (formats.size() == 1) return formats.front();
  if (formats.empty()) throw InputError(path, "", "not a dataset directory: expected " + expected);
  std::string names;
  for (const DatasetFormat f : formats)
    names += (names.empty() ? "" : " or ") + std::string(to_string(f));
  throw InputError(
      path, "dataset.format",
      "auto finds the files of several formats, " + found + ": set dataset.format to " + names);
}

}  // namespace

DatasetFormat resolve_dataset_format(const DatasetSpec& spec) {
  if (spec.format == DatasetFormat::kSynthetic && !spec.path.empty())
    throw ConfigError("dataset path '" + spec.path +
                      "' given with format synthetic, which reads no files (use format auto, or "
                      "no path for the generator)");
  DatasetFormat format = spec.format;
  if (spec.path.empty()) {
    if (format == DatasetFormat::kAuto) format = DatasetFormat::kSynthetic;
  } else {
    require_directory(spec.path);
    if (format == DatasetFormat::kAuto) format = detect_format(spec.path);
  }
  if (spec.features_from_edges != FeaturesFromEdges::kNone && format != DatasetFormat::kOgb &&
      format != DatasetFormat::kNumpy)
    throw ConfigError(
        fmt::format("dataset.features_from_edges = {} reads the OGB layouts' edge features "
                    "(raw/edge-feat.csv.gz, or raw/data.npz's edge_feat) or the NumPy layout's "
                    "(edge_feat.npy); the dataset's format is {} (use none)",
                    to_string(spec.features_from_edges), to_string(format)));
  // The other layouts carry one split each, which a split name would silently not choose.
  if (!spec.split.empty() && format != DatasetFormat::kOgb) {
    throw ConfigError(fmt::format(
        "dataset.split = '{}': only the OGB layout has named splits (the folders under split/); {} "
        "is read {} the {} layout, with one split: leave dataset.split empty",
        spec.split, dataset_name(spec),
        spec.format == DatasetFormat::kAuto ? "as" : "(dataset.format) as", to_string(format)));
  }
  return format;
}

Graph load_dataset(const DatasetSpec& spec) {
  const double start = steady_now_s();
  const DatasetFormat format = resolve_dataset_format(spec);
  Graph g = loader_of(format).load(spec);
  const bool generated = format == DatasetFormat::kSynthetic;
  apply_transform(g, spec.transform);
  g.validate(generated ? "synthetic graph" : spec.path);
  const double seconds = steady_now_s() - start;
  spdlog::info(
      "loaded {} ({}): {} nodes, {} edges, {} features, {} classes{}, split {}/{}/{} in "
      "{:.2f} s{}",
      g.name, to_string(format), g.num_nodes, g.num_edges(), g.feat_dim, g.num_classes,
      g.multilabel ? " (multi-label)" : "", g.train.size(), g.valid.size(), g.test.size(), seconds,
      g.heterogeneous() ? fmt::format("; heterogeneous: {} node types, {} relations",
                                      g.node_types.size(), g.relations.size())
                        : "");
  return g;
}

std::string dataset_name(const DatasetSpec& spec) {
  return spec.path.empty() ? "the generated graph" : spec.path;
}

void require_training_nodes(int64_t train_nodes, const DatasetSpec& spec) {
  if (train_nodes > 0) return;
  throw InputError(dataset_name(spec), "training split",
                   fmt::format("has no nodes{}: training needs labelled training nodes",
                               spec.split.empty() ? "" : " (dataset.split = " + spec.split + ")"));
}

void require_classes(int64_t num_classes, bool multilabel, const std::string& file,
                     const std::string& field) {
  if (multilabel || num_classes >= 2) return;
  throw InputError(file, field,
                   fmt::format("{} class{}: training a classifier needs at least 2", num_classes,
                               num_classes == 1 ? " (every label is 0)" : "es"));
}

void require_features(int64_t feat_dim, const DatasetSpec& spec) {
  if (feat_dim > 0) return;
  throw InputError(dataset_name(spec), "features",
                   "have 0 columns: a model needs at least one input feature");
}

}  // namespace adaqp
