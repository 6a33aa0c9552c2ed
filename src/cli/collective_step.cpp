#include "collective_step.h"

#include <fmt/format.h>

#include <utility>

#include "adaqp/comm/host_of.h"

namespace adaqp::cli {

std::string rank_and_host(int rank) {
  const std::string host = host_name();
  return host.empty() ? fmt::format("rank {}", rank) : fmt::format("rank {} (host {})", rank, host);
}

RankFailure::RankFailure(int rank, std::exception_ptr error)
    : where_(rank_and_host(rank)), error_(std::move(error)) {}

}  // namespace adaqp::cli
