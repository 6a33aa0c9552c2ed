// Loading a dataset by format: the OGB node-property raw layout, a directory of NumPy arrays, or
// the built-in generator.
#pragma once

#include <string>

#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph.h"

namespace adaqp {

struct DatasetSpec {
  std::string format = "auto";  // ogb | numpy | synthetic | auto (detected from the directory)
  std::string path;             // dataset directory (unused for synthetic)
  std::string split;            // OGB split folder name; empty = the only one present
  GeneratorOptions synthetic;   // for format synthetic
  GraphTransform transform;
};

// OGB raw layout: raw/{edge,node-feat,node-label,num-node-list,num-edge-list}.csv.gz and
// split/<name>/{train,valid,test}.csv.gz. node-label with several columns is multi-label (0/1);
// a single column holds class ids, num_classes = max + 1. An empty `split` picks the only split
// folder. Every problem (missing file, bad gzip, ragged row, non-numeric or non-finite value, id
// out of range, count disagreeing with num-*-list, overlapping splits) throws one InputError naming
// the file, the 1-based line and the value. Graph.name is the directory's basename.
Graph load_ogb(const std::string& dir, const std::string& split);

// NumPy layout: edge_index.npy (int32/int64 [2,E], row 0 sources), feat.npy (float32 [N,F]),
// label.npy (int32/int64 [N] class ids, or float32/uint8/bool [N,C] multi-label 0/1),
// train/valid/test.npy (int32/int64 index arrays or bool masks of length N). .npy versions 1.0 and
// 2.0, C order. Errors as for load_ogb, with the array index instead of the line.
Graph load_numpy(const std::string& dir);

// Writes g in the NumPy layout above (edge_index int64, feat float32, label.npy int64 or uint8
// multi-label; splits as int64 index arrays), atomically: into "<dir>.tmp-<pid>", then renamed to
// `dir`, which must not exist (InputError otherwise). On any failure nothing is left behind.
void save_numpy(const Graph& g, const std::string& dir);

// Dispatches on spec.format (auto: raw/edge.csv.gz means ogb, edge_index.npy means numpy, anything
// else is an InputError naming the directory), then applies spec.transform and validates the
// result. An unknown format is a ConfigError.
Graph load_dataset(const DatasetSpec& spec);

}  // namespace adaqp
