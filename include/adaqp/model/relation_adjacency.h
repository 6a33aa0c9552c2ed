// A heterogeneous part's adjacency split by relation, for layers that aggregate every relation on
// its own (R-GCN): z_(i,r) = mean over the in-neighbours j of owned node i by relation r of h_j.
// Its rows are the (owned node, relation) pairs that have such in-neighbours ("pairs"), ordered by
// relation, then by owned row; the sources are the owned rows (block `local`) and the received
// rows of the rows layout, the halo nodes in the part's order (block `halo`). A third block sums
// the pairs back into their nodes. Every entry weighs 1 / deg_r(i), deg_r(i) the number of
// relation-r in-edges of i in the whole graph (the part holds all of them), so z is exact whatever
// the partition.
// Over the relation-first layout (exchange/relation_first_layout.h) it also holds the sender's
// blocks: the pairs of the rows it sends (ordered by relation, then sent row) by owned rows, the
// sent rows by those pairs (ones), and the block that adds the received rows into their owned
// rows (the layout's coefficients).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/common/device.h"
#include "adaqp/exchange/relation_first_layout.h"
#include "adaqp/model/adjacency_block.h"
#include "adaqp/partition/part.h"

namespace adaqp {

// Layer 0's cached aggregation of the features over the pairs whose row is not zero (the others
// add nothing: e.g. the pairs of relations whose sources have no features): the rows (kept pairs x
// features), relation r's kept pairs [offsets[r], offsets[r + 1]), and the block summing the kept
// pairs into their owned rows (ones) with its transpose.
struct PairFeatures {
  at::Tensor rows;
  std::vector<int64_t> offsets;
  std::unique_ptr<AdjacencyBlock> combine, combine_t;
};

class RelationAdjacency {
 public:
  // The blocks of `part` (heterogeneous) on `device`; with `first` (the part's relation-first
  // layout), its sender's and receiver's blocks too.
  RelationAdjacency(const Part& part, const RelationFirstLayout* first, const Device& device);
  ~RelationAdjacency();
  RelationAdjacency(const RelationAdjacency&) = delete;
  RelationAdjacency& operator=(const RelationAdjacency&) = delete;

  int32_t num_relations() const { return static_cast<int32_t>(pair_offsets_.size()) - 1; }
  int64_t num_pairs() const { return pair_offsets_.back(); }
  // Relation r's pairs are [pair_offsets()[r], pair_offsets()[r + 1]).
  const std::vector<int64_t>& pair_offsets() const { return pair_offsets_; }

  // Pairs x owned rows, and its transpose.
  AdjacencyBlock& local() { return *local_; }
  AdjacencyBlock& local_t() { return *local_t_; }
  // Pairs x the halo nodes (the rows layout's received rows), and its transpose (not built over
  // the relation-first layout, whose layers read the halo block only for layer 0's cache).
  AdjacencyBlock& halo() { return *halo_; }
  AdjacencyBlock& halo_t() { return *halo_t_; }
  // Owned rows x pairs, entry 1 where the pair is the row's (the sum over a node's relations), and
  // its transpose.
  AdjacencyBlock& combine() { return *combine_; }
  AdjacencyBlock& combine_t() { return *combine_t_; }
  // `z` (pairs x d, on `device`) without its zero rows, as PairFeatures.
  PairFeatures without_zero_pairs(const at::Tensor& z, const Device& device) const;

  // The relation-first layout's blocks (null without it), each with its transpose:
  bool relation_first() const { return send_ != nullptr; }
  // Sent pairs x owned rows, entries 1 / the pair's divisor; relation r's sent pairs are
  // [send_pair_offsets()[r], send_pair_offsets()[r + 1]).
  AdjacencyBlock& send() { return *send_; }
  AdjacencyBlock& send_t() { return *send_t_; }
  const std::vector<int64_t>& send_pair_offsets() const { return send_pair_offsets_; }
  // Sent rows x sent pairs, entry 1 where the pair is the row's.
  AdjacencyBlock& send_combine() { return *send_combine_; }
  AdjacencyBlock& send_combine_t() { return *send_combine_t_; }
  // Owned rows x received rows, the coefficient with which the received row adds into the owned
  // row.
  AdjacencyBlock& received() { return *received_; }
  AdjacencyBlock& received_t() { return *received_t_; }

 private:
  void build_sender(const Part& part, const RelationFirstLayout& first, const Device& device);

  std::vector<int64_t> pair_offsets_;
  std::unique_ptr<AdjacencyBlock> local_, local_t_, halo_, halo_t_, combine_, combine_t_;
  std::vector<int64_t> send_pair_offsets_;
  std::unique_ptr<AdjacencyBlock> send_, send_t_, send_combine_, send_combine_t_, received_,
      received_t_;
};

}  // namespace adaqp
