#include <memory>
#include <vector>

#include "halo_layouts.h"

namespace adaqp {

namespace {

class RowsHaloLayout final : public HaloLayout {
 public:
  RowsHaloLayout(const Part& part, const EdgeNorm& norm)
      : part_(part),
        boundary_(row_boundary(part)),
        values_(block_values(norm, part.halo_indptr, part.halo_indices, part.owned_in_degree,
                             part.halo_out_degree)),
        halo_{part.num_owned(), part.num_halo(), part.halo_indptr.data(), part.halo_indices.data(),
              values_.data()} {}

  const Boundary& boundary() const override { return boundary_; }
  const std::vector<int64_t>* send_list() const override { return &part_.send_idx; }
  bool receives_node_rows() const override { return true; }
  const kernels::CsrView& halo_block() const override { return halo_; }
  const kernels::CsrView* send_matrix() const override { return nullptr; }
  const float* sent_rows(const float* h, int64_t /*d*/) override { return h; }
  void release_sent_rows() override {}
  void add_returned_gradients(HaloExchanger& exchanger, int64_t /*d*/, float* dh) override {
    exchanger.add_received_gradients(dh);
  }
  std::unique_ptr<RelationAdjacency> relation_adjacency(const Part& part,
                                                        const Device& device) const override {
    return std::make_unique<RelationAdjacency>(part, nullptr, device);
  }

 private:
  const Part& part_;
  Boundary boundary_;
  std::vector<float> values_;
  kernels::CsrView halo_;
};

}  // namespace

std::unique_ptr<HaloLayout> make_rows_halo_layout(const Part& part, const EdgeNorm& norm) {
  return std::make_unique<RowsHaloLayout>(part, norm);
}

}  // namespace adaqp
