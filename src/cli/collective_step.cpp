#include "collective_step.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <mpi.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <thread>
#include <utility>

#include "adaqp/comm/host_of.h"
#include "adaqp/common/error.h"

namespace adaqp::cli {

std::string rank_and_host(int rank) {
  const std::string host = host_name();
  return host.empty() ? fmt::format("rank {}", rank) : fmt::format("rank {} (host {})", rank, host);
}

RankFailure::RankFailure(int rank, std::exception_ptr error)
    : where_(rank_and_host(rank)), error_(std::move(error)) {}

const char* one_line_message(const std::exception& e) {
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  return torch_error != nullptr ? torch_error->what_without_backtrace() : e.what();
}

bool out_of_memory(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return true;
  if (dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr) return true;
  const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
  return torch_error != nullptr &&
         torch_error->msg().find("can't allocate memory") != std::string::npos;
}

int report_error(const std::exception_ptr& error, const std::string& where) {
  const std::string head = where.empty() ? "error" : "error on " + where;
  try {
    std::rethrow_exception(error);
  } catch (const RankFailure& f) {
    return report_error(f.error(), f.where());
  } catch (const InvariantError& e) {
    std::fprintf(stderr, "adaqp: internal %s: %s\n", head.c_str(), e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "adaqp: %s: %s\n", head.c_str(), e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    // The file system refused (a path, a permission, a full disk): the message names the path.
    std::fprintf(stderr, "adaqp: %s: %s\n", head.c_str(), e.what());
  } catch (const std::exception& e) {
    if (out_of_memory(e)) {
      std::fprintf(stderr,
                   "adaqp: %s: out of memory: the job's sizes (its dataset, or keys such as "
                   "dataset.synthetic.num_nodes, feat_dim, model.hidden, model.layers) need more "
                   "memory than this process can have\n",
                   head.c_str());
      return 1;
    }
    std::fprintf(stderr, "adaqp: internal %s: %s\n", head.c_str(), one_line_message(e));
    return 2;
  } catch (...) {
    std::fprintf(stderr, "adaqp: internal %s: an exception of unknown type\n", head.c_str());
    return 2;
  }
  return 1;
}

void end_job_on_silence(const Communicator& comm, const SilentPeerError& e) {
  // Every rank that watches meets the silence at about the same time: the first of them reports
  // it, the others only if the job still runs a moment later.
  if (comm.rank() != (e.peer() == 0 ? 1 : 0)) std::this_thread::sleep_for(kLateReportS);
  abort_job(report_error(std::make_exception_ptr(e), ""));
}

void end_job_on_comm_error(const Communicator& comm, const std::exception_ptr& error) {
  if (comm.rank() != 0) std::this_thread::sleep_for(kLateReportS);
  abort_job(report_error(error, ""));
}

void abort_job(int code) {
  std::fflush(nullptr);
  spdlog::shutdown();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort returned: nothing else holds this process
}

}  // namespace adaqp::cli
