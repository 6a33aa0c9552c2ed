// This process's resident memory (Linux /proc/self): the current and the peak resident set size,
// and a reset of the peak, so that each phase of a run (loading, partitioning, start-up, training,
// one epoch) reports its own peak.
#pragma once

#include <cstdint>

namespace adaqp {

// VmHWM of /proc/self/status in bytes; 0 where unavailable.
int64_t peak_rss_bytes();

// Makes the peak the current resident set (writes 5 to /proc/self/clear_refs). False where the
// kernel does not allow it: peaks then count from the start of the process.
bool reset_peak_rss();

}  // namespace adaqp
