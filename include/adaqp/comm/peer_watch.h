// Watches every rank's signs of life while all ranks work together inside code that has no bound
// of ours: PT-Scotch's own MPI calls wait forever for a rank that has stalled. A thread of each
// rank sends a sign to every other every few seconds over a duplicate of the communicator and
// takes theirs; a rank silent for the bound (the communicator's timeout: communication.timeout_s)
// makes `on_silence` run on that thread, once, to end the job: the rank's own thread may be held in
// the foreign code's wait. A rank stopped itself (the whole job suspended and resumed) gives every
// peer a fresh bound. Without a duplicate (MPI without MPI_THREAD_MULTIPLE, wrapped transports)
// nothing is watched.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/signs.h"

namespace adaqp {

class PeerWatch {
 public:
  // Runs on the watch's thread with the silence found; the CLI's ends the job (MPI_Abort).
  using OnSilence = std::function<void(const SilentPeerError&)>;

  // Collective over comm's ranks. `what` names the work in the error ("the ranks were
  // partitioning the dataset with PT-Scotch"); the bound is the communicator's timeout now.
  PeerWatch(Communicator& comm, std::string what, OnSilence on_silence);
  PeerWatch(const PeerWatch&) = delete;
  PeerWatch& operator=(const PeerWatch&) = delete;
  // Where finish() did not return (an error unwinds): tells the others this rank is done, without
  // waiting for them.
  ~PeerWatch();

  // Whether signs of life travel (a duplicate of the communicator exists).
  bool watched() const { return signs_ != nullptr; }

  // Collective: tells the others this rank is done and waits, still watching, until every rank
  // has said so. Throws the SilentPeerError where `on_silence` returned; may then be called again,
  // with fresh bounds, should the silent rank resume (its signs are taken, none left to a later
  // communicator).
  void finish();

 private:
  void watch();
  // One look: signs sent when due, signs taken; true once every peer has said it is done.
  bool look(bool finishing);

  Communicator& comm_;
  const std::string what_;
  const OnSilence on_silence_;
  const double silence_s_;
  std::unique_ptr<Communicator> signs_;
  std::unique_ptr<signs::Sender> sender_;
  std::vector<std::unique_ptr<signs::Receiver>> receivers_;
  std::vector<signs::Silence> silence_;
  std::vector<char> peer_done_;
  std::vector<char> told_done_;  // the peers this rank's kDone has been sent to
  double next_sign_s_ = 0;
  std::optional<SilentPeerError> found_;

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finishing_ = false;  // finish() was called
  bool stop_ = false;       // the destructor: leave without waiting for the others
  bool over_ = false;       // the thread has ended
  bool finished_ = false;   // finish() returned
};

}  // namespace adaqp
