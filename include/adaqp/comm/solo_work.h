// Waits on one rank's long work alone (rank 0 partitioning a dataset, or sending the parts one
// after another) with signs of life. The working rank (the root) sends one to every other rank
// every few seconds from a thread of its own, over a duplicate of the communicator; the others wait
// as long as the work takes, but end after communication.timeout_s without a sign: the root has
// stalled (stopped, frozen) or its host cannot be reached. A waiting rank stopped itself (the whole
// job suspended and resumed) gives the root a fresh bound from its wake. Without a duplicate (MPI
// without MPI_THREAD_MULTIPLE, wrapped transports) there are no signs: the communicator's timeout
// is raised to kSoloWorkTimeoutS while the SoloWork lives, finish() ends in a barrier under it, and
// a stalled root holds the others that long.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "adaqp/comm/communicator.h"
#include "adaqp/comm/signs.h"

namespace adaqp {

class SoloWork {
 public:
  // Collective over comm's ranks. `what` names the work in an error ("partitioning the dataset");
  // the bound on the silence is the communicator's timeout as it is now.
  SoloWork(Communicator& comm, int root, std::string what);
  SoloWork(const SoloWork&) = delete;
  SoloWork& operator=(const SoloWork&) = delete;
  // The root says it is done if finish() did not (an error unwinds); the communicator's timeout
  // is restored.
  ~SoloWork();

  bool is_root() const { return comm_.rank() == root_; }
  // Whether signs of life travel (a duplicate of the communicator exists).
  bool watched() const { return signs_ != nullptr; }

  // Root: the work is over; stops the signs and tells the others. Others: waits until the root
  // says so, throwing SilentPeerError after the bound without a sign (and may then be called
  // again, with a fresh bound, should the root resume). Every rank calls it.
  void finish();
  // Others: waits for `work`, an exchange with the root on comm, watching the root's signs
  // meanwhile (SilentPeerError after the bound without one). Without signs, work.wait().
  void wait(Work& work);

 private:
  void send_signs();
  // Others: takes any sign that has arrived; true when it says the work is over.
  bool take_signs();
  // Throws SilentPeerError; a later wait starts a fresh bound.
  [[noreturn]] void silent();

  Communicator& comm_;
  const int root_;
  const std::string what_;
  const double saved_timeout_s_;
  const double silence_s_;
  std::unique_ptr<Communicator> signs_;
  bool finished_ = false;
  // Root: the thread that sends signs, stopped by finish().
  std::unique_ptr<signs::Sender> sender_;
  std::thread sending_;
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  // Others: the root's signs, and how long it has been silent.
  std::unique_ptr<signs::Receiver> receiver_;
  signs::Silence silence_;
  bool done_ = false;  // the root has said so
};

}  // namespace adaqp
