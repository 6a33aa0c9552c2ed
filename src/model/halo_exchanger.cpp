#include "adaqp/model/halo_exchanger.h"

#include <chrono>
#include <string>

#include "adaqp/common/error.h"
#include "adaqp/kernels/gather.h"

namespace adaqp {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

size_t bytes_of(int64_t rows, int64_t d) {
  return static_cast<size_t>(rows) * static_cast<size_t>(d) * sizeof(float);
}

}  // namespace

HaloExchanger::HaloExchanger(const Part& part, Communicator& comm) : part_(part), comm_(comm) {
  ADAQP_CHECK(comm.size() == part.num_parts && comm.rank() == part.rank,
              "part " + std::to_string(part.rank) + " of " + std::to_string(part.num_parts) +
                  " used on rank " + std::to_string(comm.rank()) + " of " +
                  std::to_string(comm.size()));
}

void HaloExchanger::start(const ExchangeBuffers& buffers, int tag, double t0) {
  ADAQP_CHECK(work_ == nullptr, "an exchange is already in flight");
  for (int r = 0; r < part_.num_parts; ++r) {
    if (r != part_.rank) stats_.bytes_sent += static_cast<int64_t>(buffers.send_bytes[r]);
  }
  work_ = comm_.exchange(buffers, tag);
  ++stats_.exchanges;
  stats_.time_s += now_s() - t0;
}

void HaloExchanger::finish() {
  ADAQP_CHECK(work_ != nullptr, "no exchange in flight");
  const double t0 = now_s();
  work_->wait();
  work_.reset();
  stats_.time_s += now_s() - t0;
}

void HaloExchanger::start_forward(const float* h, int64_t d, float* halo_out, int tag) {
  const double t0 = now_s();
  const int world = part_.num_parts;
  send_buf_.resize(static_cast<size_t>(part_.send_idx.size()) * static_cast<size_t>(d));
  kernels::gather_rows_cpu(h, d, part_.send_idx.data(), static_cast<int64_t>(part_.send_idx.size()),
                           send_buf_.data());
  ExchangeBuffers buffers;
  buffers.send.resize(world);
  buffers.send_bytes.resize(world);
  buffers.recv.resize(world);
  buffers.recv_bytes.resize(world);
  for (int r = 0; r < world; ++r) {
    buffers.send[r] = send_buf_.data() + part_.send_offsets[r] * d;
    buffers.send_bytes[r] = bytes_of(part_.send_count_to(r), d);
    buffers.recv[r] = halo_out + part_.halo_offsets[r] * d;
    buffers.recv_bytes[r] = bytes_of(part_.halo_count_from(r), d);
  }
  width_ = d;
  start(buffers, tag, t0);
}

void HaloExchanger::finish_forward() {
  finish();
}

void HaloExchanger::start_backward(const float* halo_grad, int64_t d, int tag) {
  const double t0 = now_s();
  const int world = part_.num_parts;
  recv_buf_.resize(static_cast<size_t>(part_.send_idx.size()) * static_cast<size_t>(d));
  ExchangeBuffers buffers;
  buffers.send.resize(world);
  buffers.send_bytes.resize(world);
  buffers.recv.resize(world);
  buffers.recv_bytes.resize(world);
  for (int r = 0; r < world; ++r) {
    buffers.send[r] = halo_grad + part_.halo_offsets[r] * d;
    buffers.send_bytes[r] = bytes_of(part_.halo_count_from(r), d);
    buffers.recv[r] = recv_buf_.data() + part_.send_offsets[r] * d;
    buffers.recv_bytes[r] = bytes_of(part_.send_count_to(r), d);
  }
  width_ = d;
  start(buffers, tag, t0);
}

void HaloExchanger::finish_backward(float* dh) {
  finish();
  const double t0 = now_s();
  const int64_t d = width_;
  // Peers one after another: a boundary row sent to several peers gets several contributions,
  // but within one peer's block every row is distinct, so the rows of a block can run in parallel.
  for (int r = 0; r < part_.num_parts; ++r) {
    const int64_t begin = part_.send_offsets[r], end = part_.send_offsets[r + 1];
#pragma omp parallel for schedule(static) if ((end - begin) * d > 65536)
    for (int64_t k = begin; k < end; ++k) {
      float* __restrict row = dh + part_.send_idx[k] * d;
      const float* __restrict src = recv_buf_.data() + k * d;
#pragma omp simd
      for (int64_t c = 0; c < d; ++c) row[c] += src[c];
    }
  }
  stats_.time_s += now_s() - t0;
}

}  // namespace adaqp
