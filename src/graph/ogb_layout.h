// The OGB raw layouts (dataset.h): CSV (ogb_loader.cpp), binary (ogb_binary_loader.cpp) and the
// heterogeneous CSV layout (ogb_hetero_layout.cpp). load_ogb_slice picks the layout; the split
// folder is read alike for all.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph.h"
#include "adaqp/graph/graph_slice.h"
#include "edge_feature_sums.h"
#include "gz_reader.h"

namespace adaqp {

// raw/data.npz and raw/node-label.npz of `dir`: the nodes, edges, features and labels of rank
// `rank`'s slice among `world`. `unlabelled` gets one entry per slice row, 1 where the node's label
// is NaN (no split may name it); such a node holds class 0.
GraphSlice read_ogb_binary(const std::filesystem::path& dir, int rank, int world,
                           const EdgeFeatureNodes& from_edges, std::vector<char>& unlabelled);

// raw/num-node-dict.csv.gz marks the heterogeneous layout; load_ogb_hetero reads it whole.
bool is_ogb_hetero(const std::filesystem::path& dir);
Graph load_ogb_hetero(const std::filesystem::path& dir, const std::string& split);

// The readers of the CSV files (gzip-compressed, no header lines), shared by the CSV layouts. Each
// throws one InputError naming the file, the 1-based line and the value. `count_file` names the
// file that gave the count the lines are checked against.
namespace ogb_csv {

// `field` in quotes; one longer than 64 bytes by its first 64 and its length.
std::string quoted(std::string_view field);
// Splits a line at commas into `fields`; returns the count.
size_t split_fields(std::string_view line, std::vector<std::string_view>& fields);
// One integer field at the reader's current line (`column` above 0: named in the error, from 1).
int64_t parse_int(const GzLineReader& in, std::string_view field, const char* what,
                  int64_t column = 0);
void check_columns(const GzLineReader& in, size_t got, size_t expected, const std::string& why);
// A file of exactly one line holding a non-negative count (num-node-list, num-edge-list).
int64_t read_count(const std::string& path);
// InputError unless `in` has read `expected` lines (as `source` says), or naming the extra or
// missing line.
void check_line_count(const GzLineReader& in, int64_t expected, const std::string& source);
[[noreturn]] void too_few_lines(const GzLineReader& in, int64_t expected,
                                const std::string& source);
[[noreturn]] void too_many_lines(const GzLineReader& in, int64_t expected,
                                 const std::string& source);
// Rows [keep.first, keep.first + keep.count) of a node-feat file of num_nodes lines into
// g.features (g.feat_dim from line 1).
void read_features(const std::string& path, int64_t num_nodes, NodeRange keep, GraphSlice& g,
                   const std::string& count_file);
// The labels of those rows into g (class ids, or 0/1 columns: multi-label); num_classes from
// every line.
void read_labels(const std::string& path, int64_t num_nodes, NodeRange keep, GraphSlice& g,
                 const std::string& count_file);
// Rows' features made from raw/edge-feat.csv.gz, read line by line beside raw/edge.csv.gz as
// read_edges passes each edge on (one pass over the edge file), as `how` says (graph/dataset.h,
// EdgeFeatureNodes).
class EdgeFeatureRows {
 public:
  EdgeFeatureRows(const std::filesystem::path& raw, int64_t num_edges, NodeRange keep,
                  const EdgeFeatureNodes& how);
  // The next line's row, the feature row of edge src -> dst (checked by read_edges).
  void add(int64_t src, int64_t dst);
  // After the last edge: the line count checked, the kept rows' features into g.
  void finish(GraphSlice& g);

 private:
  int64_t num_edges_;
  GzLineReader feats_;
  EdgeFeatureSums sums_;
  std::vector<float> row_;
};
// The in-edges of those rows from an edge file of num_edges "src,dst" lines, as CSR rows; every
// edge, checked, to `feature_rows` where one is given.
void read_edges(const std::string& path, int64_t num_nodes, int64_t num_edges, NodeRange keep,
                GraphSlice& g, EdgeFeatureRows* feature_rows = nullptr);
// One split file's ids inside `keep`, ascending; `owner` (one entry per kept node) records which
// split (1, 2, 3) holds each, `unlabelled` (empty, or one entry per kept node) the nodes no split
// may name.
std::vector<int64_t> read_split(const std::string& path, int64_t num_nodes, NodeRange keep,
                                std::vector<char>& owner, char tag,
                                const std::vector<std::string>& names,
                                const std::vector<char>& unlabelled);
// The split folder under dir/split: `requested`, or the only one.
std::string choose_split(const std::filesystem::path& dir, const std::string& requested);

}  // namespace ogb_csv

}  // namespace adaqp
