// How the cut edges travel between workers (communication.exchange; docs/design.md section 4): a
// layout decides which rows a worker sends and receives, how it forms the sent rows from h, the
// block that folds the received rows into A h, and how the partial gradients returned in
// backward fold into A^T g. DistGraph owns the schedule (when exchanges start and end, the
// timers, the quantization plan) and asks its layout only these questions, without knowing which
// one it has.
//
// A new layout: its own file defining a HaloLayout and a make_* function (declared in
// src/model/halo_layouts.h), its case in make_halo_layout, its name in common/choices, its test.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/common/choices.h"
#include "adaqp/common/device.h"
#include "adaqp/exchange/halo_exchanger.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/model/adjacency_block.h"
#include "adaqp/model/relation_adjacency.h"
#include "adaqp/partition/boundary.h"
#include "adaqp/partition/part.h"

namespace adaqp {

class HaloLayout {
 public:
  virtual ~HaloLayout() = default;

  // The rows the exchanges send and receive.
  virtual const Boundary& boundary() const = 0;
  // The owned rows a forward exchange gathers from h itself (the exchanger's send list), or null
  // when the layout forms the sent rows (sent_rows).
  virtual const std::vector<int64_t>* send_list() const = 0;
  // Whether the received rows are the halo nodes' own rows of h, and backward returns one
  // gradient per such row (what layers that weigh the edges themselves need: attention).
  virtual bool receives_node_rows() const = 0;
  // The normalised adjacency over the received rows (rows: owned nodes), host memory.
  virtual const kernels::CsrView& halo_block() const = 0;
  // S (rows: the sent rows; columns: owned nodes) where the layout forms the sent rows, host
  // memory; else null.
  virtual const kernels::CsrView* send_matrix() const = 0;
  // Whether the layers form the sent rows themselves (relation_first: each row is transformed by
  // the layer's weights), passing them in send order (DistGraph::begin_formed_rows); sent_rows and
  // add_returned_gradients are then not used.
  virtual bool layer_forms_rows() const { return false; }
  // The adjacency by relation of `part` over this layout's received rows, on `device`, for layers
  // that aggregate each relation on their own (R-GCN); InvariantError where the layout's rows mix
  // the relations (cover).
  virtual std::unique_ptr<RelationAdjacency> relation_adjacency(const Part& part,
                                                                const Device& device) const = 0;

  // Forward: the rows to send for h (num_owned x d): h itself when the exchanger gathers them (the
  // send list), else rows formed from it into a buffer the layout holds until release_sent_rows.
  // The caller has quiesced any exchange that may still read the previous buffer.
  virtual const float* sent_rows(const float* h, int64_t d) = 0;
  // The sent rows are no longer needed (their exchange has sent them).
  virtual void release_sent_rows() = 0;
  // Backward, after `exchanger` finished the exchange: dh += the partial gradients the peers
  // returned for the rows this worker sent (dh: num_owned x d).
  virtual void add_returned_gradients(HaloExchanger& exchanger, int64_t d, float* dh) = 0;
};

// The layout `layout` of `part` (which must outlive it), its products on `device`. Collective
// when the layout agrees its rows with the peers (cover).
std::unique_ptr<HaloLayout> make_halo_layout(ExchangeLayout layout, const Part& part,
                                             Communicator& comm, const EdgeNorm& norm,
                                             const Device& device);

}  // namespace adaqp
