// The adaqp command line as a function: the adaqp binary's main calls it, and so do test binaries
// that put a fault-injecting transport under a training job (tests/tools/).
#pragma once

#include <functional>
#include <memory>

#include "adaqp/comm/communicator.h"

namespace adaqp::cli {

// Given the transport a training job would use, returns the communicator its trainer uses instead
// (one that forwards to `inner`). The adaqp binary sets none: the job trains over its transport.
using TransportWrapper = std::function<std::unique_ptr<Communicator>(Communicator& inner)>;

// Parses the command line and runs its subcommand; returns the process's exit status (0, or 1
// after printing one error line; 2 for an internal error).
int run(int argc, char** argv, const TransportWrapper& wrap_transport = {});

}  // namespace adaqp::cli
