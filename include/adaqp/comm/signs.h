// Signs of life between ranks, over a duplicate of the job's communicator: what SoloWork (one
// rank's work alone) and PeerWatch (all ranks' work together) share. A sign is one byte on one tag;
// a peer's signs arrive in the order it sent them, its last one kDone.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/common/error.h"

namespace adaqp {

// A rank heard nothing from `peer` for the bound on the silence (communication.timeout_s), or the
// ranks did not all join the duplicate of the communicator within it: `peer` stalled (stopped,
// frozen) or its host cannot be reached. The job ends on it without an agreement of the ranks,
// which the silent one would hold (cli/collective_step.h).
class SilentPeerError : public CommError {
 public:
  SilentPeerError(int peer, const std::string& what) : CommError(what), peer_(peer) {}
  int peer() const { return peer_; }

 private:
  int peer_;
};

namespace signs {

inline constexpr char kAlive = 1;
inline constexpr char kDone = 2;

// Seconds between two signs for a bound of `silence_s` on the silence: four within the bound, so
// that a late one (a busy host) is not taken for a stall, and at least one every 5 s.
double interval_s(double silence_s);

// Sends signs to the other ranks. A peer whose previous sign has not left (a busy link) is
// skipped, not waited for.
class Sender {
 public:
  explicit Sender(Communicator& signs);
  // Signs that never left are cancelled.
  ~Sender() = default;
  // `sign` to `peer`; false, and nothing sent, while its previous sign is still in flight.
  bool send(int peer, char sign);
  // `sign` to every other rank whose previous sign has left; a failed send does not keep the
  // later peers' signs back (the first failure is thrown after all were tried).
  void round(char sign);
  // Blocks until every sign in flight has left (bounded by the communicator's timeout).
  void drain();

 private:
  Communicator& signs_;
  std::vector<std::unique_ptr<Work>> in_flight_;
  std::vector<char> bytes_;  // each peer's sign in flight lives here until it has left
};

// One peer's signs, in order. Destroying it cancels the receive of a sign still expected.
class Receiver {
 public:
  Receiver(Communicator& signs, int peer);
  // The next sign that has arrived, or 0 while none has (never blocks); 0 for good after kDone.
  char take();

 private:
  Communicator& signs_;
  int peer_;
  std::unique_ptr<Work> next_;
  char sign_ = 0;
  bool done_ = false;
};

// How long a peer has been silent, as seen by a process that may have been stopped itself.
class Silence {
 public:
  Silence();  // as if a sign came now
  void heard();
  // Whether the peer has been silent for more than `bound_s`. A gap of more than a second since
  // the last look means this process was stopped itself (the whole job suspended and resumed):
  // it cannot tell the peer's silence from its own, and the bound restarts.
  bool past(double bound_s);

 private:
  double heard_s_;
  double looked_s_;
};

}  // namespace signs
}  // namespace adaqp
