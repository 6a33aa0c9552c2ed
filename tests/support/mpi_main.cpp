// gtest main for the multi-process tests: initialises MPI, runs every test on every rank and makes
// every rank's result count (all ranks exit non-zero if any rank failed). Rank 0 prints the usual
// gtest output; the other ranks print only their failures, tagged with the rank.
//
// Skips are sorted by kind (mpi/mpi_skip.h): a test that needs more ranks than this run has is not
// applicable; the others (no GPU, a missing precondition) rank 0 lists after the run, under the
// skip marker (skip_marker.h) when no rank failed. When CI=true a skip for anything but a GPU fails
// the run instead.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "adaqp/comm/mpi_error.h"
#include "adaqp/comm/mpi_session.h"
#include "adaqp/common/cpu_features.h"
#include "adaqp/common/log.h"
#include "mpi_skip.h"
#include "skip_marker.h"
#include "torch_cuda_setup.h"

namespace {

bool starts_with(const char* text, const char* prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

// Collects the skipped tests that ctest must see, with their reasons.
class SkipCollector : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult& result = *info.result();
    if (!result.Skipped()) return;
    for (int i = 0; i < result.total_part_count(); ++i) {
      const ::testing::TestPartResult& part = result.GetTestPartResult(i);
      if (!part.skipped()) continue;
      const char* message = part.message() ? part.message() : "";
      if (starts_with(message, adaqp::test::kNotApplicableHere)) return;
      skips_.push_back(std::string(info.test_suite_name()) + "." + info.name() + ": " + message);
      if (!starts_with(message, adaqp::test::kNeedsGpu)) ++precondition_skips_;
      return;
    }
  }

  const std::vector<std::string>& skips() const { return skips_; }
  int precondition_skips() const { return precondition_skips_; }

 private:
  std::vector<std::string> skips_;
  int precondition_skips_ = 0;
};

bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::strcmp(ci, "true") == 0;
}

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
  // ADAQP_MAX_CPU_ISA, read here rather than on the kernels' first use (inside OpenMP regions).
  adaqp::cpu_isa();
  adaqp::MpiSession mpi(argc, argv);
  ::testing::InitGoogleTest(argc, *argv);
  int rank = 0;
  adaqp::check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", -1);
  adaqp::setup_logging(rank, adaqp::LogLevel::kWarn);
  adaqp::test::load_torch_cuda_backend_in_cuda_builds();
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  auto* collector = new SkipCollector;  // owned by gtest's listener list
  listeners.Append(collector);
  int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  const bool ci_fail = running_in_ci() && collector->precondition_skips() > 0;
  if (ci_fail) local_failed = 1;
  int any_failed = 0;
  adaqp::check_mpi(MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
                   "MPI_Allreduce", rank);
  if (rank == 0 && any_failed && !local_failed)
    std::fprintf(stderr, "some tests failed on other ranks (see their [rank R] lines)\n");
  // The skip marker only after a run without a failure on any rank: it would hide the failure.
  if (rank == 0 && !collector->skips().empty()) {
    const char* head = ci_fail      ? "FAIL (CI=true: only GPU tests may skip)"
                       : any_failed ? "skipped besides the failures"
                                    : adaqp::test::kSkippedMarker;
    std::fprintf(stderr, "%s: %zu test(s) skipped:\n", head, collector->skips().size());
    for (const auto& skip : collector->skips()) std::fprintf(stderr, "  %s\n", skip.c_str());
  }
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
