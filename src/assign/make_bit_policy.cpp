#include "adaqp/assign/make_bit_policy.h"

#include "adaqp/common/error.h"

namespace adaqp {

std::unique_ptr<BitPolicy> make_bit_policy(const Boundary& boundary, int layers,
                                           const SchemeOptions& scheme,
                                           const AdaptiveOptions& adaptive,
                                           const AdaptiveInputs* adaptive_inputs) {
  if (scheme.scheme != BitScheme::kAdaptive) return make_scheme_policy(boundary, layers, scheme);
  ADAQP_CHECK(adaptive_inputs != nullptr && adaptive_inputs->a_halo != nullptr &&
                  adaptive_inputs->comm != nullptr,
              "the adaptive scheme needs the halo block, the communicator and the link model");
  return std::make_unique<AdaptivePolicy>(
      boundary, *adaptive_inputs->a_halo, *adaptive_inputs->comm, adaptive_inputs->time, layers,
      adaptive, scheme.seed, adaptive_inputs->measured_times, adaptive_inputs->send_matrix);
}

}  // namespace adaqp
