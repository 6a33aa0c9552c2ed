// Loading a dataset as slices (graph/graph_slice.h), one per rank, so that no rank holds the whole
// graph: the start-up of partition.method ptscotch.
#pragma once

#include <string>

#include "adaqp/comm/communicator.h"
#include "adaqp/graph/dataset.h"
#include "adaqp/graph/graph_slice.h"

namespace adaqp {

// Collective over `comm` (host buffers). The NumPy layout is read by ranges: each rank reads its
// rows of feat.npy and label.npy, a 1/W share of edge_index.npy's columns (edges then travel to
// the rank holding their target) and its part of the splits, with the errors load_numpy gives
// (file and index); with spec.features_from_edges every rank streams edge_index.npy and
// edge_feat.npy whole, summing its rows' edges in file order as load_numpy does. The OGB and
// GraphSAINT layouts are streamed whole by every rank, which keeps its slice (load_ogb_slice,
// load_graphsaint_slice: the errors of the whole loaders); stored feature arrays (feats.npy, a
// stored node_feat member) are read by range. The generator has no slice reader: rank 0 generates
// the graph whole and sends every rank its slice (logged). spec.transform is applied as
// load_dataset applies it; the result equals slice_of(load_dataset(spec), rank, world). Local work
// runs through `step`, so a failure on any rank ends the call on every rank.
GraphSlice load_slice(const DatasetSpec& spec, Communicator& comm, const CollectiveStep& step);

// fingerprint(g) of the whole graph the ranks' slices form (collective), without gathering it.
std::string slice_fingerprint(const GraphSlice& s, Communicator& comm);

// The edges i -> v of the ranks' slices reversed, sent to the slice holding i, merged into its
// rows and deduplicated: GraphTransform::symmetrize on slices (collective).
void symmetrize_slices(GraphSlice& s, Communicator& comm);

}  // namespace adaqp
