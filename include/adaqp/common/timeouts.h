// Bounds on blocking waits between ranks, in seconds (each counted by common/wait_bound.h).
#pragma once

namespace adaqp {

// Every exchange and collective by default (communication.timeout_s).
constexpr double kDefaultTimeoutS = 300.0;

// After a failed exchange, how long its cancelled transfers are waited for before their requests
// are freed (at most communication.timeout_s): a stalled peer never completes them, and the job's
// error is reported once they are freed.
constexpr double kCancelWaitS = 5.0;

// Waits on long work of unequal shares: one rank's alone (comm/solo_work.h) without
// MPI_THREAD_MULTIPLE, which sends no signs of life, and the job's own waits while every rank
// partitions with PT-Scotch (its ranks' signs of life watched instead: comm/peer_watch.h). The
// others wait at most this long, whatever communication.timeout_s says.
constexpr double kSoloWorkTimeoutS = 24 * 3600.0;

}  // namespace adaqp
