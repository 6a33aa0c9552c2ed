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

// Ends the process with status `code` once run() has returned: flushes the C and C++ streams and
// spdlog's loggers, then leaves without running static destructors. run() has closed every file
// and MPI by then; what is left are the libraries' teardowns, above all libtorch's deregistration
// of its operators, about 0.1 s of CPU a process (a quarter of an empty run's), which the kernel
// does by unmapping them. Under a CUDA profiler, which writes its data in exit handlers, it exits
// the ordinary way.
[[noreturn]] void exit_after_run(int code);

}  // namespace adaqp::cli
