// MPI for the in-process layer tests: initialised once per test process (a singleton MPI run at
// one rank), so the layers run on a real one-rank communicator.
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>

#include "adaqp/comm/mpi_communicator.h"
#include "adaqp/comm/mpi_session.h"
#include "nn_test_util.h"

namespace adaqp::test {
namespace {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    session_ = std::make_unique<MpiSession>(nullptr, nullptr);
    comm_ = make_mpi_communicator(MPI_COMM_WORLD, 60.0);
    instance_ = this;
  }
  void TearDown() override {
    instance_ = nullptr;
    comm_.reset();
    session_.reset();
  }
  static MpiEnvironment* instance_;
  std::unique_ptr<MpiSession> session_;
  std::unique_ptr<Communicator> comm_;
};

MpiEnvironment* MpiEnvironment::instance_ = nullptr;

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

}  // namespace

Communicator& single_rank_comm() {
  if (MpiEnvironment::instance_ == nullptr) throw InvariantError("MPI environment not set up");
  return *MpiEnvironment::instance_->comm_;
}

}  // namespace adaqp::test
