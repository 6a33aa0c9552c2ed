#include "adaqp/model/dropout.h"

#include <string>

#include "adaqp/common/error.h"
#include "adaqp/common/philox.h"

namespace adaqp {

void dropout_mask(const DropoutKey& key, float p, const int64_t* gids, int64_t n, int64_t width,
                  float* out) {
  ADAQP_CHECK(p >= 0.0f && p < 1.0f, "dropout probability " + std::to_string(p));
  const float keep = 1.0f / (1.0f - p);
#pragma omp parallel for schedule(static) if (n * width > 65536)
  for (int64_t i = 0; i < n; ++i) {
    float* row = out + i * width;
    const auto gid = static_cast<uint64_t>(gids[i]);
    for (int64_t b = 0; b * 4 < width; ++b) {
      const PhiloxWords words = philox_block(key.seed, key.epoch, key.layer, RngStream::kDropout,
                                             gid, static_cast<uint32_t>(b));
      for (int64_t e = b * 4; e < width && e < b * 4 + 4; ++e) {
        row[e] = philox_uniform(words.v[e % 4]) < p ? 0.0f : keep;
      }
    }
  }
}

}  // namespace adaqp
