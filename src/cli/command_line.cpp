#include "adaqp/cli/command_line.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <malloc.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "adaqp/comm/launcher.h"
#include "adaqp/common/cpu_features.h"
#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/config.h"
#include "adaqp/model/host_block_cache.h"
#include "collective_step.h"
#include "commands.h"

namespace adaqp::cli {
namespace {

// The parse error in the form of every other error; a first word that names no command is said so.
std::string parse_error_text(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    return fmt::format("unknown command '{}' (commands: {})", argv[1], fmt::join(names, ", "));
  }
  return fmt::format("{} (adaqp --help, adaqp COMMAND --help)", e.what());
}

}  // namespace

int run(int argc, char** argv, const TransportWrapper& wrap_transport) {
  // libtorch backs CPU tensors of 2 MiB and more with transparent huge pages when this is set
  // (read once, at the first allocation): the per-epoch activations and dropout masks are tens of
  // MB, and faulting them in 4 KiB pages every epoch cost a quarter of a CiteSeer epoch. An
  // explicit setting in the environment wins.
  setenv("THP_MEM_ALLOC_ENABLE", "1", /*overwrite=*/0);
  // The same tensors are freed and allocated again every epoch. glibc's adaptive thresholds hand
  // such blocks back to the kernel and fault them in zeroed again (a sixth of a Cora epoch);
  // fixed thresholds keep blocks below 2 MiB, and up to 256 MiB of free heap, for reuse. Larger
  // tensors are reused by the host block cache (model/host_block_cache.h).
  static_assert(HostBlockCache::kMinBytes <= size_t{32} << 20, "glibc's largest mmap threshold");
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(HostBlockCache::kMinBytes));
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  CLI::App app{"adaqp " ADAQP_VERSION
               ": distributed full-graph GNN training with adaptive message quantization"};
  app.require_subcommand(1);
  app.set_version_flag("--version", ADAQP_VERSION " (libtorch " ADAQP_TORCH_VERSION ")");
  add_generate_command(app);
  add_partition_command(app);
  add_info_command(app);
  add_train_command(app, wrap_transport);
  try {
    setup_logging(0);
    // The environment's cap on the CPU kernels' vector paths, read before MPI starts: a wrong value
    // is reported once, by the job's first process, like a wrong command line.
    try {
      cpu_isa();
    } catch (const ConfigError& e) {
      if (first_launched_process()) std::fprintf(stderr, "adaqp: error: %s\n", e.what());
      return 1;
    }
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    // A job that failed at a collective step: its failing rank has printed the error
    // (collective_step.h).
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    // Command lines are parsed before MPI starts: only the job's first process reports a mistake
    // in one (every process exits non-zero).
    if (first_launched_process()) {
      std::fprintf(stderr, "adaqp: error: %s\n", parse_error_text(app, e, argc, argv).c_str());
    }
    return 1;
  } catch (...) {
    return report_error(std::current_exception(), "");
  }
  return 0;
}

void exit_after_run(int code) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  spdlog::shutdown();
  // CUDA's profilers (Nsight Systems, Nsight Compute) attach through this variable and write out
  // their buffers in exit handlers: under them the process ends the ordinary way.
  if (std::getenv("CUDA_INJECTION64_PATH") != nullptr) std::exit(code);
  std::_Exit(code);
}

}  // namespace adaqp::cli
