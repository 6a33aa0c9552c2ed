#include "adaqp/quant/widths.h"

namespace adaqp::quant {

std::string width_list() {
  std::string text;
  for (int k = 0; k < kNumWidths; ++k) {
    if (k > 0) text += k + 1 < kNumWidths ? ", " : " or ";
    text += std::to_string(bit_width(k));
  }
  return text;
}

std::string not_a_width(int bits) {
  return std::to_string(bits) + " is not " + width_list();
}

}  // namespace adaqp::quant
