// Loading a dataset by format: the OGB node-property raw layout, a directory of NumPy arrays, the
// GraphSAINT layout, or the built-in generator.
#pragma once

#include <string>

#include "adaqp/common/choices.h"
#include "adaqp/graph/generator.h"
#include "adaqp/graph/graph.h"
#include "adaqp/graph/graph_slice.h"

namespace adaqp {

struct DatasetSpec {
  // A loader, or auto: the layout detected from `path` (the generator when `path` is empty).
  DatasetFormat format = DatasetFormat::kAuto;
  std::string path;   // dataset directory; must be empty for synthetic
  std::string split;  // OGB split folder name; empty = the only one present
  // OGB and NumPy layouts: node features from the edges' (EdgeFeatureNodes below) instead of
  // node-feat or feat.npy.
  FeaturesFromEdges features_from_edges = FeaturesFromEdges::kNone;
  GeneratorOptions synthetic;  // for format synthetic
  GraphTransform transform;
};

// How the OGB and NumPy loaders make node features from edge features
// (DatasetSpec::features_from_edges): kNone reads node-feat (feat.npy); kMean and kSum reduce, for
// each node, the feature rows (raw/edge-feat.csv.gz, data.npz's edge_feat, or edge_feat.npy) of the
// edges that end at it, and with both_ends also of those that start at it (dataset.symmetrize: the
// reverse edge it adds carries its edge's row; a self-loop is its own reverse and counts once),
// each edge as often as the file lists it; a node without such edges gets zeros, and a dataset
// without edges is an InputError. node-feat (feat.npy) is then not read (ogbn-proteins has none);
// edge rows are checked as node-feat's are (finite, within float32).
struct EdgeFeatureNodes {
  FeaturesFromEdges reduce = FeaturesFromEdges::kNone;
  bool both_ends = false;
};
// The spec's: its features_from_edges, both_ends from its transform's symmetrize.
EdgeFeatureNodes edge_feature_nodes(const DatasetSpec& spec);

// OGB raw layouts, both with split/<name>/{train,valid,test}.csv.gz (an empty `split` picks the
// only split folder; a folder holding only split_dict.pt, the torch pickle that
// ogb.io.DatasetSaver.save_split writes, is an InputError asking for the CSV files):
//   CSV (where raw/edge.csv.gz exists):
//     raw/{edge,node-feat,node-label,num-node-list,num-edge-list}.csv.gz. node-label with several
//     columns is multi-label (0/1); a single column holds class ids, num_classes = max + 1.
//     With from_edges, raw/edge-feat.csv.gz (a row per edge line) is read instead of node-feat.
//   binary (raw/data.npz without raw/edge.csv.gz; as ogb.io.DatasetSaver writes it and
//   ogbn-papers100M ships it; members deflated or stored):
//     raw/data.npz        edge_index (int [2, E], row 0 sources), node_feat (float16/32/64 or int
//                         [N, F], converted to float32), num_nodes_list = [N], num_edges_list =
//                         [E]; edge_feat (as node_feat, [E, F]) read instead of node_feat by
//                         from_edges; other members are ignored
//     raw/node-label.npz  node_label: class ids [N] or [N, 1] (int, or float holding integers;
//                         NaN marks an unlabelled node, which holds class 0 and which no split
//                         may name) or multi-label 0/1 values [N, C], C > 1
//   heterogeneous (where raw/num-node-dict.csv.gz exists; as ogbn-mag ships it; read whole):
//     raw/num-node-dict.csv.gz (type names, then counts), raw/triplet-type-list.csv.gz
//     (head,relation,tail lines), raw/relations/<head>___<relation>___<tail>/{edge,num-edge-list}
//     .csv.gz (ids within the types), optional raw/node-feat/<type>/node-feat.csv.gz (one width
//     for every featured type) and raw/node-label/<type>/node-label.csv.gz, and
//     split/<name>/<type>/{train,valid,test}.csv.gz per labelled type. The Graph is typed
//     (graph.h): types in name order, relations in triplet order; its homogeneous view has zero
//     feature rows for the featureless types, class 0 and no split for the unlabelled ones.
//     load_ogb_slice refuses it (ConfigError: slices carry no types), and so does from_edges
//     other than kNone (ConfigError: its edges are relations').
// Every problem (missing file or member, bad gzip or zip data, ragged row, wrong dtype or shape,
// non-numeric or non-finite value, id out of range, count disagreeing with num-*-list, overlapping
// splits) throws one InputError naming the file, the 1-based line or the member and index, and
// the value. Graph.name is the directory's basename.
Graph load_ogb(const std::string& dir, const std::string& split,
               const EdgeFeatureNodes& from_edges = {});
// The same for rank `rank`'s slice among `world` (graph/graph_slice.h): every file is streamed and
// checked whole (but for a stored node_feat member, read from the slice's first row to its last),
// and the slice's rows, their in-edges and its split ids are kept. load_ogb is the slice of rank 0
// of 1.
GraphSlice load_ogb_slice(const std::string& dir, const std::string& split, int rank, int world,
                          const EdgeFeatureNodes& from_edges = {});

// NumPy layout: edge_index.npy (int32/int64 [2,E], row 0 sources), feat.npy (float32 [N,F]),
// label.npy (int32/int64 [N] class ids, or float32/uint8/bool [N,C] multi-label 0/1),
// train/valid/test.npy (int32/int64 index arrays or bool masks of length N). .npy versions 1.0 and
// 2.0, C order. Typed (heterogeneous) graphs add node_types.json ({"node_types": [...],
// "relations": [[source type, name, target type], ...]}), node_type_offsets.npy (int [T + 1],
// ascending from 0 to N) and edge_type.npy (int [E], each edge_index column's relation; every edge
// joins its relation's types). With from_edges, edge_feat.npy (float32 [E, F], row e the features
// of edge_index's column e: PyG's data.edge_attr) is read instead of feat.npy and N is label.npy's
// rows (a typed dataset refuses it: ConfigError); a dataset with edge_feat.npy and no feat.npy read
// without it is an InputError naming the key. Errors as for load_ogb, with the array index (or JSON
// key) instead of the line.
Graph load_numpy(const std::string& dir, const EdgeFeatureNodes& from_edges = {});

// GraphSAINT layout (Zeng et al., ICLR 2020; the AdaQP reference's Reddit, Yelp, Flickr and
// AmazonProducts):
//   adj_full.npz    a SciPy CSR matrix [N, N] as scipy.sparse.save_npz writes it: a zip archive
//                   (members stored or deflate-compressed) of format.npy (b'csr'), shape.npy,
//                   indptr.npy and indices.npy (int32/int64); data.npy is not read, the matrix's
//                   values are ignored. Entry (i, j) is the edge j -> i: row i lists the sources
//                   of node i, exactly Graph's CSR by destination (rows are sorted, duplicate
//                   entries kept). GraphSAINT's matrices are symmetric, so both directions exist.
//   feats.npy       float32 or float64 [N, F] (converted to float32; finite, within float32 range)
//   class_map.json  {"<node id>": class id, ...} or {"<node id>": [0/1, ...], ...} (multi-label,
//                   every list as long as the first); keys exactly "0".."N-1", each once
//   role.json       {"tr": [...], "va": [...], "te": [...]}: disjoint node id lists, "tr" not empty
// Every problem throws one InputError naming the file, the zip member, JSON key or index (or the
// byte offset of malformed JSON) and the value.
Graph load_graphsaint(const std::string& dir);
// The same for rank `rank`'s slice among `world`: adj_full.npz's index members are streamed and
// checked whole, the slice's rows of feats.npy read by range, both JSON files parsed and checked
// whole; the slice's rows, their in-edges, labels and split ids are kept. load_graphsaint is the
// slice of rank 0 of 1.
GraphSlice load_graphsaint_slice(const std::string& dir, int rank, int world);

// Writes a heterogeneous g in OGB's heterogeneous layout above, atomically (as save_numpy): every
// relation's edges, the features of the types with any non-zero row, the labels and the split
// (split/main) of the types with any node in the split. InputError for a homogeneous g.
void save_ogb_hetero(const Graph& g, const std::string& dir);

// Writes g in the NumPy layout above (edge_index int64, feat float32, label.npy int64 or uint8
// multi-label; splits as int64 index arrays), atomically: into "<dir>.tmp-<pid>", then renamed to
// `dir`, which must not exist (InputError otherwise). On any failure nothing is left behind. A
// heterogeneous g also gets its node_types.json, node_type_offsets.npy and edge_type.npy.
void save_numpy(const Graph& g, const std::string& dir);

// spec.format, or for auto the format detected as load_dataset detects it (errors as there);
// ConfigError for a split name (spec.split) or features_from_edges with a layout other than OGB's.
DatasetFormat resolve_dataset_format(const DatasetSpec& spec);

// Dispatches on spec.format through the loader registry (dataset.cpp: name, detect, load; auto: no
// path means synthetic; in the directory, raw/edge.csv.gz, raw/data.npz or
// raw/num-node-dict.csv.gz means ogb,
// edge_index.npy means numpy, adj_full.npz means graphsaint, anything else is an InputError naming
// the directory), then applies spec.transform and validates the result. A path given with format
// synthetic is a ConfigError.
Graph load_dataset(const DatasetSpec& spec);

// How errors name the dataset: its path, or "the generated graph".
std::string dataset_name(const DatasetSpec& spec);

// InputError naming the dataset's training split unless it has nodes (`train_nodes`, over every
// slice): a partition is made for training, and the loss of an empty split is undefined.
void require_training_nodes(int64_t train_nodes, const DatasetSpec& spec);
// InputError naming the dataset when its nodes have no feature columns: every model's first layer
// reads at least one.
void require_features(int64_t feat_dim, const DatasetSpec& spec);
// InputError naming `file` and `field` when single-label data has fewer than 2 classes: every label
// is 0, and a model would score 1.0 on any split having learnt nothing (multi-label data has a
// binary task a class).
void require_classes(int64_t num_classes, bool multilabel, const std::string& file,
                     const std::string& field);

}  // namespace adaqp
