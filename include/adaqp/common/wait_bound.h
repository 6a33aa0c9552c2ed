// A bound on a wait for other processes that does not count the time this process was stopped
// itself (the whole job suspended by a scheduler and resumed): on its wake every peer seems late,
// and a plain deadline would end the job the scheduler meant to go on.
#pragma once

namespace adaqp {

// A gap of more than this between two looks of a waiting loop (which looks every few
// microseconds) means this process was stopped, or starved of its core, for that long.
constexpr double kOwnPauseS = 1.0;

class WaitBound {
 public:
  explicit WaitBound(double seconds);
  // Whether the wait has lasted longer than its bound, not counting gaps of more than kOwnPauseS
  // since the previous look.
  bool passed();

 private:
  double end_s_;
  double looked_s_;
};

}  // namespace adaqp
