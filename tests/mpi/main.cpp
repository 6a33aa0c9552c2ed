// gtest main for the multi-process tests: initialises MPI, runs every test on every rank and makes
// every rank's result count (all ranks exit non-zero if any rank failed). Rank 0 prints the usual
// gtest output; the other ranks print only their failures, tagged with the rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <exception>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/comm/mpi_session.h"
#include "adaqp/common/log.h"

namespace {

// Prints failed assertions and failed tests of a non-zero rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_,
                 result.file_name() ? result.file_name() : "unknown", result.line_number(),
                 result.message());
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] [  FAILED  ] %s.%s\n", rank_, info.test_suite_name(),
                   info.name());
  }

 private:
  int rank_;
};

int run(int* argc, char*** argv) {
  adaqp::MpiSession mpi(argc, argv);
  ::testing::InitGoogleTest(argc, *argv);
  int rank = 0;
  adaqp::check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", -1);
  adaqp::setup_logging(rank, adaqp::LogLevel::kWarn);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  adaqp::check_mpi(MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
                   "MPI_Allreduce", rank);
  if (rank == 0 && any_failed && !local_failed)
    std::fprintf(stderr, "some tests failed on other ranks (see their [rank R] lines)\n");
  return any_failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adaqp_mpi_tests: %s\n", e.what());
    return 1;
  }
}
