#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/exchange/cover_layout.h"
#include "adaqp/tensor/torch_device.h"
#include "halo_layouts.h"

namespace adaqp {

namespace {

// Values of S: a source row's one entry is 1, a partial row's the edges'.
std::vector<float> send_values(const EdgeNorm& norm, const CoverLayout& cover,
                               const std::vector<int64_t>& owned_out_deg) {
  std::vector<float> values(cover.send_indices.size());
  for (size_t k = 0; k + 1 < cover.send_indptr.size(); ++k) {
    const int64_t dst_in_deg = cover.send_dst_in_degree[k];
    for (int64_t e = cover.send_indptr[k]; e < cover.send_indptr[k + 1]; ++e) {
      values[e] =
          dst_in_deg < 0 ? 1.0F : norm.weight(dst_in_deg, owned_out_deg[cover.send_indices[e]]);
    }
  }
  return values;
}

class CoverHaloLayout final : public HaloLayout {
 public:
  CoverHaloLayout(const Part& part, Communicator& comm, const EdgeNorm& norm, const Device& device)
      : cover_(cover_layout(part, comm)),
        // The cover's boundary moves here: the layout keeps only its matrices.
        boundary_(std::move(cover_.boundary)),
        device_(device),
        halo_values_(block_values(norm, cover_.halo_indptr, cover_.halo_indices,
                                  part.owned_in_degree, cover_.recv_out_degree)),
        halo_{part.num_owned(), boundary_.recvs(), cover_.halo_indptr.data(),
              cover_.halo_indices.data(), halo_values_.data()},
        send_values_(send_values(norm, cover_, part.owned_out_degree)) {
    const kernels::CsrView send{boundary_.sends(), part.num_owned(), cover_.send_indptr.data(),
                                cover_.send_indices.data(), send_values_.data()};
    send_ = std::make_unique<AdjacencyBlock>(send, kernels::CsrMatrix{}, device);
    send_t_ = AdjacencyBlock::transpose(send, device);
  }

  const Boundary& boundary() const override { return boundary_; }
  const std::vector<int64_t>* send_list() const override { return nullptr; }
  bool receives_node_rows() const override { return false; }
  const kernels::CsrView& halo_block() const override { return halo_; }
  const kernels::CsrView* send_matrix() const override { return &send_->view(); }

  const float* sent_rows(const float* h, int64_t d) override {
    rows_ = at::empty({std::max<int64_t>(boundary_.sends() * d, 1)},
                      torch_options(device_, at::kFloat));
    send_->multiply(h, d, rows_.data_ptr<float>(), /*accumulate=*/false);
    return rows_.data_ptr<float>();
  }
  // CUDA: the exchange is ordered before any reuse of the memory.
  void release_sent_rows() override { rows_ = at::Tensor(); }

  void add_returned_gradients(HaloExchanger& exchanger, int64_t d, float* dh) override {
    const at::Tensor received = exchanger.received_gradients();
    send_t_->multiply(received.data_ptr<float>(), d, dh, /*accumulate=*/true);
  }
  std::unique_ptr<RelationAdjacency> relation_adjacency(const Part& /*part*/,
                                                        const Device& /*device*/) const override {
    throw InvariantError("the cover layout's partial sums mix the relations of a row");
  }

 private:
  CoverLayout cover_;
  Boundary boundary_;
  Device device_;
  std::vector<float> halo_values_;
  kernels::CsrView halo_;
  std::vector<float> send_values_;
  std::unique_ptr<AdjacencyBlock> send_, send_t_;  // S and S^T
  at::Tensor rows_;                                // S h, from sent_rows to release_sent_rows
};

}  // namespace

std::unique_ptr<HaloLayout> make_cover_halo_layout(const Part& part, Communicator& comm,
                                                   const EdgeNorm& norm, const Device& device) {
  return std::make_unique<CoverHaloLayout>(part, comm, norm, device);
}

}  // namespace adaqp
