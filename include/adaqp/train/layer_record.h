// The per-layer fields of one rank's epoch record in metrics.jsonl (run.h): the measured time of
// each exchange and, for the adaptive scheme, what the assignment cost and predicts. Packed into a
// fixed number of doubles per layer count, so that run_training can gather them from every rank.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "adaqp/train/trainer.h"

namespace adaqp {

// Doubles in the packed record of a model of `layers` layers.
size_t layer_record_size(int layers);

std::vector<double> pack_layer_record(const EpochStats& st, int layers);

// The JSON fields of a packed record, each preceded by a comma:
//   "comm_time_by_layer":{"fwd":[s per layer],"bwd":[...]}        (measured on this rank)
// and for the adaptive scheme also
//   "assign_time_s", "assign_solved" (true when the widths were re-solved this epoch),
//   "predicted_comm_time_s" (modelled time of all this epoch's exchanges, every rank alike),
//   "predicted_comm_time_by_layer":{"fwd":[...],"bwd":[...]},
//   "exchange_time_by_layer":{"fwd":[...],"bwd":[...]}    (this rank's, from the last rank's
//                                                          start: AssignStats::measured_*),
//   "bits_hist":{"fwd":[[n2,n4,n8] per layer],"bwd":[...]}        (this rank's sent messages).
std::string layer_record_json(const double* packed, int layers);

}  // namespace adaqp
