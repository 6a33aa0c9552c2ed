// The CUDA quantizer against the CPU one: bit-identical packed bytes, metadata, ranges, dequantized
// rows and error messages. Skipped, with the reason, without CUDA or a device.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adaqp/config.h"
#include "adaqp/quant/quantizer.h"

#if ADAQP_WITH_CUDA
#include <cuda_runtime.h>

#include "adaqp/kernels/cuda_device.h"
#include "cuda_skip.h"
#endif

namespace adaqp::quant {
namespace {

#if ADAQP_WITH_CUDA

void cuda_ok(cudaError_t err) {
  ASSERT_EQ(err, cudaSuccess) << cudaGetErrorString(err);
}

// A device copy of a host vector, freed on destruction.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host) : size_(host.size()) {
    if (cudaMalloc(&ptr_, bytes() == 0 ? 1 : bytes()) != cudaSuccess) throw Error("cudaMalloc");
    if (!host.empty() &&
        cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice) != cudaSuccess)
      throw Error("cudaMemcpy to device");
  }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() { return static_cast<T*>(ptr_); }
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    if (cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost) != cudaSuccess)
      throw Error("cudaMemcpy to host");
    return host;
  }

 private:
  size_t bytes() const { return size_ * sizeof(T); }
  void* ptr_ = nullptr;
  size_t size_;
};

std::vector<float> random_rows(int64_t n, int64_t d, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> x(static_cast<size_t>(n * d));
  for (float& v : x) v = dist(gen);
  return x;
}

// Quantizes and dequantizes rows `index` of src (width d) on the CPU and on the GPU and expects
// the same bytes, metadata, ranges and rows.
void expect_same_as_cpu(const std::vector<float>& src, int64_t d, const std::vector<int64_t>& index,
                        const std::vector<int64_t>& gids, int bits, const QuantKey& key,
                        const std::string& where) {
  const auto n = static_cast<int64_t>(index.size());
  const int64_t bytes = n * packed_row_bytes(d, bits);
  std::vector<uint8_t> packed(bytes);
  std::vector<float> meta(2 * n), ranges(n), rows(n * d);
  quantize_rows(src.data(), d, index.data(), gids.data(), n, bits, key, packed.data(), meta.data(),
                ranges.data());
  dequantize_rows(packed.data(), meta.data(), n, d, bits, rows.data());

  DeviceArray<float> d_src{src}, d_meta{std::vector<float>(2 * n)}, d_ranges{std::vector<float>(n)},
      d_rows{std::vector<float>(n * d)};
  DeviceArray<int64_t> d_index{index}, d_gids{gids};
  DeviceArray<uint8_t> d_packed{std::vector<uint8_t>(bytes, 0xAB)};
  DeviceArray<unsigned long long> d_status{std::vector<unsigned long long>(1, 7)};
  quantize_rows_cuda(d_src.get(), d, d_index.get(), d_gids.get(), n, bits, key, d_packed.get(),
                     d_meta.get(), d_ranges.get(), d_status.get(), nullptr);
  check_quantize_status_cuda(d_status.get(), d_src.get(), d, d_index.get(), d_gids.get(), n, key,
                             nullptr);
  dequantize_rows_cuda(d_packed.get(), d_meta.get(), n, d, bits, d_rows.get(), nullptr);
  cuda_ok(cudaDeviceSynchronize());
  ASSERT_EQ(d_packed.to_host(), packed) << where;
  ASSERT_EQ(d_meta.to_host(), meta) << where;
  ASSERT_EQ(d_ranges.to_host(), ranges) << where;
  ASSERT_EQ(d_rows.to_host(), rows) << where;
}

TEST(QuantCuda, BitIdenticalToCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const QuantKey key{0xfeedull, 12, 2, RngStream::kQuantBackward};
  for (int bits : {2, 4, 8}) {
    for (int64_t d : {1, 2, 3, 5, 8, 31, 64, 100, 255, 256, 257, 1025}) {
      for (int64_t n : {1, 7, 33, 1000}) {
        std::vector<float> src = random_rows(n + 2, d, static_cast<uint32_t>(d * 131 + n));
        for (int64_t e = 0; e < d; ++e) src[e] = 0.1f;               // a constant row
        if (n > 2) src[2 * d] = 1.0e30f, src[3 * d - 1] = -1.0e30f;  // a huge range
        std::vector<int64_t> index(n), gids(n);
        for (int64_t i = 0; i < n; ++i) index[i] = (i * 5 + 1) % (n + 2), gids[i] = 1000 + 3 * i;
        expect_same_as_cpu(
            src, d, index, gids, bits, key,
            "b=" + std::to_string(bits) + " d=" + std::to_string(d) + " n=" + std::to_string(n));
      }
    }
  }
}

TEST(QuantCuda, RowsBeyondOneGridAreAllQuantized) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  // More rows than one grid of the row kernels covers (65,535 blocks of 8 rows).
  const int64_t n = 600000, d = 4;
  const std::vector<float> src = random_rows(n, d, 9);
  std::vector<int64_t> index(n), gids(n);
  for (int64_t i = 0; i < n; ++i) index[i] = n - 1 - i, gids[i] = i;
  for (int bits : {2, 8}) {
    expect_same_as_cpu(src, d, index, gids, bits, QuantKey{3, 1, 1, RngStream::kQuantForward},
                       "bits " + std::to_string(bits));
  }
}

TEST(QuantCuda, ScatterAddMatchesCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const int64_t n = 50, d = 70, rows = 120;
  for (int bits : {2, 4, 8}) {
    const std::vector<float> grads = random_rows(n, d, 3);
    std::vector<int64_t> gids(n), targets(n);
    for (int64_t i = 0; i < n; ++i) gids[i] = i, targets[i] = (i * 7) % rows;
    std::vector<uint8_t> packed(n * packed_row_bytes(d, bits));
    std::vector<float> meta(2 * n);
    quantize_rows(grads.data(), d, nullptr, gids.data(), n, bits, QuantKey{}, packed.data(),
                  meta.data(), nullptr);
    std::vector<float> dst = random_rows(rows, d, 4);
    DeviceArray<float> d_dst(dst), d_meta(meta);
    DeviceArray<uint8_t> d_packed(packed);
    DeviceArray<int64_t> d_targets(targets);
    dequantize_scatter_add(packed.data(), meta.data(), n, d, bits, targets.data(), dst.data());
    dequantize_scatter_add_cuda(d_packed.get(), d_meta.get(), n, d, bits, d_targets.get(),
                                d_dst.get(), nullptr);
    cuda_ok(cudaDeviceSynchronize());
    EXPECT_EQ(d_dst.to_host(), dst) << "b=" << bits;
  }
}

TEST(QuantCuda, SameErrorAsCpu) {
  ADAQP_REQUIRE_CUDA_DEVICE();
  const int64_t n = 20, d = 16;
  std::vector<float> src = random_rows(n, d, 5);
  src[13 * d + 9] = std::numeric_limits<float>::quiet_NaN();
  src[17 * d + 2] = std::numeric_limits<float>::infinity();
  std::vector<int64_t> gids(n);
  for (int64_t i = 0; i < n; ++i) gids[i] = 40 + i;
  const QuantKey key{1, 2, 1, RngStream::kQuantForward};
  std::string cpu_message, cuda_message;
  std::vector<uint8_t> packed(n * packed_row_bytes(d, 4));
  std::vector<float> meta(2 * n);
  try {
    quantize_rows(src.data(), d, nullptr, gids.data(), n, 4, key, packed.data(), meta.data(),
                  nullptr);
  } catch (const NonFiniteError& e) {
    cpu_message = e.what();
  }
  DeviceArray<float> d_src(src), d_meta(meta);
  DeviceArray<int64_t> d_gids(gids);
  DeviceArray<uint8_t> d_packed(packed);
  DeviceArray<unsigned long long> d_status{std::vector<unsigned long long>(1, 0)};
  quantize_rows_cuda(d_src.get(), d, nullptr, d_gids.get(), n, 4, key, d_packed.get(), d_meta.get(),
                     nullptr, d_status.get(), nullptr);
  try {
    check_quantize_status_cuda(d_status.get(), d_src.get(), d, nullptr, d_gids.get(), n, key,
                               nullptr);
  } catch (const NonFiniteError& e) {
    cuda_message = e.what();
  }
  EXPECT_NE(cpu_message.find("node 53"), std::string::npos) << cpu_message;
  EXPECT_EQ(cuda_message, cpu_message);
}

#else

TEST(QuantCuda, BitIdenticalToCpu) {
  GTEST_SKIP() << "built without CUDA (ADAQP_WITH_CUDA=0)";
}

#endif

}  // namespace
}  // namespace adaqp::quant
