#include "collective_step.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <utility>

namespace adaqp::cli {

std::string rank_and_host(int rank) {
  std::array<char, HOST_NAME_MAX + 1> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) return fmt::format("rank {}", rank);
  return fmt::format("rank {} (host {})", rank, host.data());
}

RankFailure::RankFailure(int rank, std::exception_ptr error)
    : where_(rank_and_host(rank)), error_(std::move(error)) {}

}  // namespace adaqp::cli
