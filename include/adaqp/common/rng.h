// Portable random draws on std::mt19937_64. The standard library's distributions are not
// specified bit-for-bit (libstdc++ and libc++ give different numbers), so everything that must be
// identical on every machine for a given seed (generated graphs, random partitions) uses these.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace adaqp {

// A well-mixed 64-bit value derived from `x` (SplitMix64 finaliser): independent stream seeds.
inline uint64_t mix_seed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) with 53 random bits.
inline double uniform01(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Uniform in [0, n), n >= 1 (multiply-shift; the bias is below n / 2^64).
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// Standard normal draws by the Box-Muller transform, keeping the second value of each pair.
class NormalSampler {
 public:
  double operator()(std::mt19937_64& rng) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform01(rng);  // (0, 1]: log is finite
    const double u2 = uniform01(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double angle = 6.283185307179586476925 * u2;  // 2 pi
    spare_ = r * std::sin(angle);
    has_spare_ = true;
    return r * std::cos(angle);
  }

 private:
  double spare_ = 0;
  bool has_spare_ = false;
};

// Fisher-Yates shuffle driven by uniform_below.
template <typename T>
void shuffle_portable(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[uniform_below(rng, i)]);
}

}  // namespace adaqp
