// The records of metrics.jsonl (docs/metrics.md is the schema), written here and nowhere
// else: one rank's record of one epoch (packed into a fixed number of doubles for a model of a
// given layer count, so that train_epochs gathers every rank's record in one collective per
// epoch), the run's summary and the link model of the adaptive scheme.
#pragma once

#include <cstddef>
#include <string>

#include "adaqp/train/epoch_loop.h"
#include "adaqp/train/link_probe.h"
#include "adaqp/train/trainer.h"

namespace adaqp {

struct EpochRecord {
  int rank = 0;
  EpochStats stats;
  bool evaluated = false;  // `scores` holds this epoch's evaluation
  EvalScores scores;
};

// Doubles in the packed record of a model of `layers` layers.
size_t packed_record_size(int layers);
// Writes packed_record_size(layers) doubles (the per-layer vectors of `r.stats` must have
// `layers` entries; the adaptive scheme's only when r.stats.adaptive).
void pack_record(const EpochRecord& r, int layers, double* out);
EpochRecord unpack_record(const double* in, int layers);

// The record as one line of JSON (no newline): one key per entry of the record's field table
// (metrics_record.cpp, which also drives packing; the accuracies only when evaluated, the adaptive
// scheme's fields only with it). Non-finite numbers are null.
std::string record_json(const EpochRecord& r);

// {"event":"summary", ...}: the fields of RunSummary.
std::string summary_json(const RunSummary& s);

// {"event":"link_model","model":"per_sender",...}: the start-up probe's fit (link_probe.h).
std::string link_model_json(const LinkModel& model);

}  // namespace adaqp
