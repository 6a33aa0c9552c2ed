#include "adaqp/model/dropout.h"

#include <string>
#include <vector>

#include "adaqp/common/error.h"
#include "adaqp/common/philox_rows.h"
#include "adaqp/common/vector_clones.h"

namespace adaqp {
namespace {

// One row of the mask: its Philox words in element order (vectorised across blocks), then the
// comparison, so the whole row vectorises.
ADAQP_VECTOR_CLONES void mask_row(const DropoutKey& key, float p, float keep, uint64_t gid,
                                  int64_t width, uint32_t* words, float* row) {
  philox_row_words(key.seed, key.epoch, key.layer, RngStream::kDropout, gid, width, words);
  for (int64_t e = 0; e < width; ++e) row[e] = philox_uniform(words[e]) < p ? 0.0f : keep;
}

}  // namespace

void dropout_mask(const DropoutKey& key, float p, const int64_t* gids, int64_t n, int64_t width,
                  float* out) {
  ADAQP_CHECK(p >= 0.0f && p < 1.0f, "dropout probability " + std::to_string(p));
  const float keep = 1.0f / (1.0f - p);
#pragma omp parallel if (n * width > 65536)
  {
    std::vector<uint32_t> words(static_cast<size_t>(philox_row_words_size(width)));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      mask_row(key, p, keep, static_cast<uint64_t>(gids[i]), width, words.data(), out + i * width);
    }
  }
}

}  // namespace adaqp
