// The bit-width policy of a run's scheme (communication.scheme): one call for the three schemes.
#pragma once

#include <memory>

#include "adaqp/assign/adaptive_policy.h"
#include "adaqp/assign/policy.h"
#include "adaqp/assign/time_model.h"
#include "adaqp/comm/communicator.h"
#include "adaqp/kernels/spmm.h"
#include "adaqp/partition/boundary.h"

namespace adaqp {

// What only the adaptive scheme needs (AdaptivePolicy's constructor says what each is).
struct AdaptiveInputs {
  const kernels::CsrView* a_halo = nullptr;
  Communicator* comm = nullptr;
  assign::TimeModel time;
  bool measured_times = true;
  const kernels::CsrView* send_matrix = nullptr;  // the cover layout's S (AdaptivePolicy)
};

// scheme.scheme uniform or random: make_scheme_policy; adaptive: an AdaptivePolicy over
// `adaptive_inputs` (required then; collective) with `adaptive` and scheme.seed.
std::unique_ptr<BitPolicy> make_bit_policy(const Boundary& boundary, int layers,
                                           const SchemeOptions& scheme,
                                           const AdaptiveOptions& adaptive,
                                           const AdaptiveInputs* adaptive_inputs);

}  // namespace adaqp
