#include "adaqp/cli/command_line.h"

#include <spdlog/spdlog.h>

#include <malloc.h>
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "adaqp/common/error.h"
#include "adaqp/common/log.h"
#include "adaqp/config.h"
#include "adaqp/model/host_block_cache.h"
#include "commands.h"

namespace adaqp::cli {

int run(int argc, char** argv, const TransportWrapper& wrap_transport) {
  // libtorch backs CPU tensors of 2 MiB and more with transparent huge pages when this is set
  // (read once, at the first allocation): the per-epoch activations and dropout masks are tens of
  // MB, and faulting them in 4 KiB pages every epoch cost a quarter of a CiteSeer epoch. An
  // explicit setting in the environment wins.
  setenv("THP_MEM_ALLOC_ENABLE", "1", /*overwrite=*/0);
  // The same tensors are freed and allocated again every epoch. glibc's adaptive thresholds hand
  // such blocks back to the kernel and fault them in zeroed again (a sixth of a Cora epoch);
  // fixed thresholds keep blocks below 32 MiB, and up to 256 MiB of free heap, for reuse. Larger
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
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const Error& e) {
    std::fprintf(stderr, "adaqp: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adaqp: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace adaqp::cli
