// A bound on a wait for other processes that does not count the time this process was stopped
// itself (the whole job suspended by a scheduler and resumed): on its wake every peer seems late,
// and a plain deadline would end the job the scheduler meant to go on.
#pragma once

namespace adaqp {

// A gap of more than this between two looks of a waiting loop (which looks at least every 200 us
// while it waits) is taken for a stop of this process, or its thread starved of a core, for the
// part of the gap the thread did not run (a look that runs for long, decoding a large message,
// still counts).
constexpr double kOwnPauseS = 1.0;

// Used by one thread: its looks read that thread's CPU time.
class WaitBound {
 public:
  explicit WaitBound(double seconds);
  // Whether the wait has lasted longer than its bound, not counting the time this thread did not
  // run in gaps of more than kOwnPauseS since the previous look.
  bool passed();

 private:
  double end_s_;
  double looked_s_;
  double cpu_s_;       // the thread's CPU time, read at most every 0.1 s while it looks
  double cpu_read_s_;  // when it was read
};

}  // namespace adaqp
