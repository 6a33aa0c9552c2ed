// What one worker holds of a partitioned graph (docs/design.md, section 3).
//
// Local numbering: owned nodes first (central, then marginal), then halo nodes grouped by owner
// rank; inside an owner's block, halo nodes are in ascending global id, which is also the order
// of that owner's send list to this worker. A received block therefore lands in one contiguous
// slice, and each send list is one gather.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "adaqp/graph/graph.h"

namespace adaqp {

// Rows of features as CSR: how a part file holds mostly-zero ones (docs/data-formats.md).
struct FeatureCsr {
  std::vector<int64_t> indptr;   // rows + 1
  std::vector<int32_t> columns;  // in [0, feat_dim), ascending within a row
  std::vector<float> values;     // finite; none has the bits of +0.0, but -0.0 may be stored
};

struct Part {
  int rank = 0;
  int num_parts = 1;
  int64_t global_num_nodes = 0;

  // Owned nodes by local index: [0, num_central) central, [num_central, num_owned()) marginal.
  std::vector<int64_t> owned_gid;
  int64_t num_central = 0;

  // Halo nodes: halo_gid[halo_offsets[r] .. halo_offsets[r+1]) are owned by rank r (none for r ==
  // rank), ascending global id. halo_offsets has num_parts + 1 entries.
  std::vector<int64_t> halo_gid;
  std::vector<int64_t> halo_offsets;

  // In-edges of owned rows, split by column kind. Row i = owned local index i.
  // local_*: columns are owned local indices; halo_*: columns index halo_gid. Columns ascending
  // within a row. Rows [0, num_central) of halo_indptr are empty.
  std::vector<int64_t> local_indptr;
  std::vector<int32_t> local_indices;
  std::vector<int64_t> halo_indptr;
  std::vector<int32_t> halo_indices;

  // Degrees in the WHOLE graph (after transforms), for GCN normalisation.
  std::vector<int64_t> owned_in_degree, owned_out_degree;
  std::vector<int64_t> halo_in_degree, halo_out_degree;

  // Boundary rows sent to each peer: send_idx[send_offsets[r] .. send_offsets[r+1]) are owned
  // local indices, ordered so that they match rank r's halo block from this rank.
  std::vector<int64_t> send_offsets;
  std::vector<int64_t> send_idx;

  // A heterogeneous graph's types (graph.h; all empty for a homogeneous one): the relation of
  // every in-edge (parallel to local_indices and halo_indices) and the node type of every owned
  // and halo node. Within a row, edges are in ascending (column, relation) order. The names of the
  // types and relations are the partition's (PartitionMeta), and so are their counts (every part
  // has them, whether or not its own edges use each relation).
  std::vector<int32_t> local_relations, halo_relations;
  std::vector<int32_t> owned_type, halo_type;
  int32_t num_node_types = 0, num_relations = 0;

  // Node data of owned nodes, by owned local index.
  int64_t feat_dim = 0;
  std::vector<float> features;  // num_owned x feat_dim
  // Instead of `features` (then empty), where the part file held them sparse: a worker that reads
  // layer 0's input sparse never makes them dense (DistGraph); densify_features() for the others.
  std::optional<FeatureCsr> feature_csr;
  int64_t num_classes = 0;
  bool multilabel = false;
  std::vector<int64_t> labels;                          // single-label
  std::vector<uint8_t> multilabels;                     // multi-label, num_owned x num_classes
  std::vector<int64_t> global_split_counts;             // {train, valid, test} over ALL parts
  std::vector<int64_t> train_idx, valid_idx, test_idx;  // owned local indices, ascending

  int64_t num_owned() const { return static_cast<int64_t>(owned_gid.size()); }
  int64_t num_marginal() const { return num_owned() - num_central; }
  int64_t num_halo() const { return static_cast<int64_t>(halo_gid.size()); }
  int64_t num_local_edges() const { return static_cast<int64_t>(local_indices.size()); }
  int64_t num_halo_edges() const { return static_cast<int64_t>(halo_indices.size()); }
  bool heterogeneous() const { return !owned_type.empty() || !halo_type.empty(); }
  int64_t halo_count_from(int r) const { return halo_offsets[r + 1] - halo_offsets[r]; }
  int64_t send_count_to(int r) const { return send_offsets[r + 1] - send_offsets[r]; }
};

// Makes p.features hold the owned rows' features dense, from p.feature_csr (then freed); nothing
// where they are dense already.
void densify_features(Part& p);

// Builds part `rank` from the whole graph and the owner of every node (owner ids in [0, W), where W
// = num_parts = 1 + the largest owner id). Degrees are g's in/out degrees. Its features as its part
// file holds them: in `feature_csr` where that encoding is the smaller (mostly-zero rows), else
// dense in `features`.
Part build_part(const Graph& g, const std::vector<int32_t>& owner, int rank);

}  // namespace adaqp
