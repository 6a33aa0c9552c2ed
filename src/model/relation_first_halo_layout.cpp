#include <memory>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/exchange/relation_first_layout.h"
#include "halo_layouts.h"

namespace adaqp {

namespace {

class RelationFirstHaloLayout final : public HaloLayout {
 public:
  RelationFirstHaloLayout(const Part& part, Communicator& comm)
      : layout_(relation_first_layout(part, comm)),
        halo_{part.num_owned(), layout_.boundary.recvs(), layout_.halo_indptr.data(),
              layout_.halo_indices.data(), layout_.halo_values.data()} {}

  const Boundary& boundary() const override { return layout_.boundary; }
  const std::vector<int64_t>* send_list() const override { return nullptr; }
  bool receives_node_rows() const override { return false; }
  const kernels::CsrView& halo_block() const override { return halo_; }
  const kernels::CsrView* send_matrix() const override { return nullptr; }
  bool layer_forms_rows() const override { return true; }
  const float* sent_rows(const float* /*h*/, int64_t /*d*/) override {
    throw InvariantError("the relation-first layout's rows are formed by the layer");
  }
  void release_sent_rows() override {}
  void add_returned_gradients(HaloExchanger& /*exchanger*/, int64_t /*d*/, float* /*dh*/) override {
    throw InvariantError("the relation-first layout's returned gradients go to the layer");
  }
  std::unique_ptr<RelationAdjacency> relation_adjacency(const Part& part,
                                                        const Device& device) const override {
    return std::make_unique<RelationAdjacency>(part, &layout_, device);
  }

 private:
  RelationFirstLayout layout_;
  kernels::CsrView halo_;
};

}  // namespace

std::unique_ptr<HaloLayout> make_relation_first_halo_layout(const Part& part, Communicator& comm) {
  return std::make_unique<RelationFirstHaloLayout>(part, comm);
}

}  // namespace adaqp
